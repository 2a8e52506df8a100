/**
 * Enterprise-managed authorization (the MCP extension `io.modelcontextprotocol/enterprise-managed-
 * authorization`, the IETF Identity Assertion JWT Authorization Grant): the ID token Neo holds from
 * the enterprise IdP is exchanged there (RFC 8693 token exchange) for an ID-JAG naming the MCP
 * server's authorization server (`audience`) and the server (`resource`); the ID-JAG is then the
 * `assertion` of a JWT-bearer grant (RFC 7523) at that authorization server, which the SDK's
 * `fetchToken` sends with the server's own client authentication (`provider.ts`).
 *
 * Neither the ID token nor the ID-JAG is logged or put in an error: a refusal names the IdP's
 * OAuth error code and description only.
 */
import { readFile } from "node:fs/promises";
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { z } from "zod";
import type { EnterpriseIdp } from "../manifest.js";

export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag";

/** OpenID Connect discovery: only what the exchange needs. */
const idpMetadata = z.object({ issuer: z.string(), token_endpoint: z.string().url() });
/** RFC 8693 §2.2.1, as the extension's §4.2 profiles it. */
const exchangeResponse = z.object({
  access_token: z.string().min(1),
  issued_token_type: z.literal(ID_JAG_TYPE),
});
const errorResponse = z.object({ error: z.string(), error_description: z.string().optional() });

export class EnterpriseIdpError extends Error {
  constructor(message: string) {
    super(`enterprise IdP: ${message}`);
    this.name = "EnterpriseIdpError";
  }
}

async function tokenEndpoint(idp: EnterpriseIdp): Promise<string> {
  const url = `${idp.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
  const res = await fetch(url, { headers: { accept: "application/json" } });
  if (!res.ok) throw new EnterpriseIdpError(`HTTP ${res.status} from ${url}`);
  const meta = idpMetadata.safeParse(await res.json().catch(() => undefined));
  if (!meta.success) throw new EnterpriseIdpError(`${url} has no token_endpoint`);
  // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
  if (meta.data.issuer.replace(/\/+$/, "") !== idp.issuer.replace(/\/+$/, ""))
    throw new EnterpriseIdpError(`${url} names issuer ${meta.data.issuer}, not ${idp.issuer}`);
  return meta.data.token_endpoint;
}

async function idToken(idp: EnterpriseIdp): Promise<string> {
  const text = await readFile(idp.id_token_file, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new EnterpriseIdpError(
      `cannot read id_token_file ${idp.id_token_file} (${err.code ?? err.message})`,
    );
  });
  const token = text.trim();
  if (!token) throw new EnterpriseIdpError(`id_token_file ${idp.id_token_file} is empty`);
  return token;
}

/**
 * The ID-JAG for the server whose discovery `discovery` holds: `audience` is its authorization
 * server's issuer, `resource` its protected-resource identifier when it publishes one (the
 * extension's §4: required and optional respectively).
 */
export async function requestIdJag(
  idp: EnterpriseIdp,
  discovery: OAuthDiscoveryState | undefined,
  scope: string | undefined,
): Promise<string> {
  const audience = discovery?.authorizationServerMetadata?.issuer ?? discovery?.authorizationServerUrl;
  if (!audience) throw new EnterpriseIdpError("the server's authorization server is not known yet");
  const resource = discovery?.resourceMetadata?.resource;
  // The extension's §4 example: Neo authenticates to the IdP as the client it signs people in with.
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    requested_token_type: ID_JAG_TYPE,
    audience,
    ...(resource ? { resource } : {}),
    ...(scope ? { scope } : {}),
    subject_token: await idToken(idp),
    subject_token_type: ID_TOKEN_TYPE,
    client_id: idp.client_id,
    ...(idp.client_secret ? { client_secret: idp.client_secret } : {}),
  });
  const res = await fetch(await tokenEndpoint(idp), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body,
  });
  const json: unknown = await res.json().catch(() => undefined);
  if (!res.ok) {
    const err = errorResponse.safeParse(json);
    const why = err.success
      ? `${err.data.error}${err.data.error_description ? `: ${err.data.error_description.slice(0, 200)}` : ""}`
      : `HTTP ${res.status}`;
    throw new EnterpriseIdpError(`refused the ID-JAG for ${resource ?? audience} (${why})`);
  }
  const ok = exchangeResponse.safeParse(json);
  if (!ok.success) throw new EnterpriseIdpError("the token exchange answer carries no ID-JAG");
  return ok.data.access_token;
}

/** The JWT-bearer grant's body (RFC 7523 §2.1); the SDK adds the client's authentication and `resource`. */
export function jwtBearerRequest(idJag: string, scope: string | undefined): URLSearchParams {
  return new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: idJag, ...(scope ? { scope } : {}) });
}
