/**
 * Outgoing message bodies (raw API shape, sent through discord.js's REST queue). Every body carries
 * `allowed_mentions: { parse: [] }` so model text never pings @everyone, @here, roles or users, and
 * new messages carry a `nonce` with `enforce_nonce` so a retried post returns the first message.
 */
import { createHash, randomBytes } from "node:crypto";
import { DISCORD_MAX_CONTENT } from "./split.js";

/** No pings of any kind, and no reply ping. */
export const NO_PINGS = { parse: [] as string[], replied_user: false } as const;

/** Discord nonces are at most 25 characters. */
export function newNonce(): string {
  return randomBytes(12).toString("base64url").slice(0, 25);
}

/**
 * The same nonce for the same `name`, in any process: Discord returns the message already created
 * with it (by this bot, in the last few minutes) instead of posting again.
 */
export function nonceFor(name: string): string {
  return createHash("sha256").update(name).digest("base64url").slice(0, 25);
}

export interface CreateBody {
  content?: string;
  embeds?: unknown[];
  components?: unknown[];
  /** With files sent as `files[n]`: which part is which (discord.com/developers/docs/reference#uploading-files). */
  attachments?: Array<{ id: number; filename: string }>;
  allowed_mentions: typeof NO_PINGS;
  nonce: string;
  enforce_nonce: true;
  flags?: number;
}

/** A new message's body; `nonce` defaults to a fresh one (a retry of this body still posts once). */
export function createBody(
  fields: Omit<CreateBody, "allowed_mentions" | "nonce" | "enforce_nonce">,
  nonce: string = newNonce(),
): CreateBody {
  return { ...fields, allowed_mentions: NO_PINGS, nonce, enforce_nonce: true };
}

export interface EditBody {
  content?: string;
  embeds?: unknown[];
  components?: unknown[];
  allowed_mentions: typeof NO_PINGS;
}

export function editBody(fields: Omit<EditBody, "allowed_mentions">): EditBody {
  return { ...fields, allowed_mentions: NO_PINGS };
}

/** The status line: small grey text, one line, within the content limit. */
export function statusLine(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  const body = one.length > 300 ? `${one.slice(0, 299)}…` : one;
  return `-# ⏳ ${body}`.slice(0, DISCORD_MAX_CONTENT);
}
