/**
 * Tokens and client secrets at rest: AES-256-GCM under a key derived from `NEO_SECRET_KEY`. A sealed
 * value is `v1.<iv>.<tag>.<ciphertext>` (base64url); a wrong key or a tampered value fails to open.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

export type SealKey = Buffer;

/** The 32-byte key: SHA-256 of the secret, so any long random string serves. */
export function sealKey(secret: string): SealKey {
  return createHash("sha256").update(secret, "utf8").digest();
}

export function seal(key: SealKey, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([c.update(plain, "utf8"), c.final()]);
  return ["v1", iv, c.getAuthTag(), body]
    .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
    .join(".");
}

/** Throws when the key is wrong or the value was changed. */
export function open(key: SealKey, sealed: string): string {
  const [v, iv, tag, body] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || body === undefined) throw new Error("not a sealed value");
  const d = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  d.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([d.update(Buffer.from(body, "base64url")), d.final()]).toString("utf8");
}
