/**
 * Enterprise-managed authorization (the MCP extension `io.modelcontextprotocol/enterprise-managed-
 * authorization`, the IETF Identity Assertion JWT Authorization Grant): the ID token Neo holds from
 * the enterprise IdP is exchanged there (RFC 8693 token exchange) for an ID-JAG naming the MCP
 * server's authorization server (`audience`) and the server (`resource`); the ID-JAG is then the
 * `assertion` of a JWT-bearer grant (RFC 7523) at that authorization server, which the SDK's
 * `fetchToken` sends with the server's own client authentication (`provider.ts`).
 *
 * The ID token is the deployment's (`id_token_file`) or the person's own, from their sign-in at the
 * IdP (`idp-session.ts`). Neither it nor the ID-JAG is logged or put in an error: a refusal names
 * the IdP's OAuth error code and description only.
 */
import { readFile } from "node:fs/promises";
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { z } from "zod";
import type { EnterpriseIdp } from "../manifest.js";
import { EnterpriseIdpError, postToIdp } from "./idp.js";

export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag";

/** RFC 8693 §2.2.1, as the extension's §4.2 profiles it. */
const exchangeResponse = z.object({
  access_token: z.string().min(1),
  issued_token_type: z.literal(ID_JAG_TYPE),
});

/** The deployment's ID token: `id_token_file`, read at each exchange so a rotated file is used. */
export async function idTokenFromFile(idp: EnterpriseIdp): Promise<string> {
  const file = idp.id_token_file;
  if (!file) throw new EnterpriseIdpError("no id_token_file for a deployment-wide server");
  const text = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new EnterpriseIdpError(`cannot read id_token_file ${file} (${err.code ?? err.message})`);
  });
  const token = text.trim();
  if (!token) throw new EnterpriseIdpError(`id_token_file ${file} is empty`);
  return token;
}

/**
 * The ID-JAG for the server whose discovery `discovery` holds: `audience` is its authorization
 * server's issuer, `resource` its protected-resource identifier when it publishes one (the
 * extension's §4: required and optional respectively).
 */
export async function requestIdJag(
  idp: EnterpriseIdp,
  idToken: string,
  discovery: OAuthDiscoveryState | undefined,
  scope: string | undefined,
): Promise<string> {
  const audience = discovery?.authorizationServerMetadata?.issuer ?? discovery?.authorizationServerUrl;
  if (!audience) throw new EnterpriseIdpError("the server's authorization server is not known yet");
  const resource = discovery?.resourceMetadata?.resource;
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    requested_token_type: ID_JAG_TYPE,
    audience,
    ...(resource ? { resource } : {}),
    ...(scope ? { scope } : {}),
    subject_token: idToken,
    subject_token_type: ID_TOKEN_TYPE,
  });
  const json = await postToIdp(idp, body, `the ID-JAG for ${resource ?? audience}`);
  const ok = exchangeResponse.safeParse(json);
  if (!ok.success) throw new EnterpriseIdpError("the token exchange answer carries no ID-JAG");
  return ok.data.access_token;
}

/** The JWT-bearer grant's body (RFC 7523 §2.1); the SDK adds the client's authentication and `resource`. */
export function jwtBearerRequest(idJag: string, scope: string | undefined): URLSearchParams {
  return new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: idJag, ...(scope ? { scope } : {}) });
}
