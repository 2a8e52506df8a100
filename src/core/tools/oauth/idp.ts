/**
 * Talking to the enterprise IdP (the manifest's `enterpriseIdp`): its OpenID Connect metadata, and
 * posts to its token endpoint as Neo's client there. Client authentication goes in the body
 * (`client_id`, `client_secret`), as the enterprise-managed authorization extension's §4 example
 * does. An error names the IdP's OAuth error code and description, never what was sent.
 */
import { z } from "zod";
import type { EnterpriseIdp } from "../manifest.js";

/** OpenID Connect Discovery 1.0 §3: what Neo uses of it. */
const metadataSchema = z.object({
  issuer: z.string(),
  token_endpoint: z.string().url(),
  authorization_endpoint: z.string().url().optional(),
  revocation_endpoint: z.string().url().optional(),
  scopes_supported: z.array(z.string()).optional(),
});
export type IdpMetadata = z.infer<typeof metadataSchema>;
const errorResponse = z.object({ error: z.string(), error_description: z.string().optional() });

export class EnterpriseIdpError extends Error {
  /** The IdP's OAuth error code (RFC 6749 §5.2) when it answered with one: safe to show the person. */
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(`enterprise IdP: ${message}`);
    this.name = "EnterpriseIdpError";
    this.code = code;
  }
}

const trim = (u: string) => u.replace(/\/+$/, "");

export async function idpMetadata(idp: EnterpriseIdp): Promise<IdpMetadata> {
  const url = `${trim(idp.issuer)}/.well-known/openid-configuration`;
  const res = await fetch(url, { headers: { accept: "application/json" } });
  if (!res.ok) throw new EnterpriseIdpError(`HTTP ${res.status} from ${url}`);
  const meta = metadataSchema.safeParse(await res.json().catch(() => undefined));
  if (!meta.success) throw new EnterpriseIdpError(`${url} has no token_endpoint`);
  // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
  if (trim(meta.data.issuer) !== trim(idp.issuer))
    throw new EnterpriseIdpError(`${url} names issuer ${meta.data.issuer}, not ${idp.issuer}`);
  return meta.data;
}

/** POST `body` (plus Neo's client authentication) to the IdP's token endpoint; its JSON answer. */
export async function postToIdp(idp: EnterpriseIdp, body: URLSearchParams, what: string): Promise<unknown> {
  return postAsClient(idp, (await idpMetadata(idp)).token_endpoint, body, what);
}

export async function postAsClient(
  idp: EnterpriseIdp,
  endpoint: string,
  body: URLSearchParams,
  what: string,
): Promise<unknown> {
  body.set("client_id", idp.client_id);
  if (idp.client_secret) body.set("client_secret", idp.client_secret);
  const res = await fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body,
  });
  const json: unknown = await res.json().catch(() => undefined);
  if (res.ok) return json;
  const err = errorResponse.safeParse(json);
  const why = err.success
    ? `${err.data.error}${err.data.error_description ? `: ${err.data.error_description.slice(0, 200)}` : ""}`
    : `HTTP ${res.status}`;
  throw new EnterpriseIdpError(`refused ${what} (${why})`, err.success ? err.data.error : undefined);
}
