/**
 * Revoking a sign-in's tokens at an MCP server's authorization server (RFC 7009), found through
 * the server's protected-resource metadata (RFC 9728) and the authorization server's (RFC 8414).
 * Best effort: a server may offer no revocation endpoint, or refuse; the caller deletes the tokens
 * regardless.
 */
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

export async function revokeAtServer(
  url: string,
  tokens: OAuthTokens,
  client: () => Promise<OAuthClientInformationMixed | undefined> | OAuthClientInformationMixed | undefined,
): Promise<void> {
  try {
    const prm = await discoverOAuthProtectedResourceMetadata(url).catch(() => undefined);
    const issuer = prm?.authorization_servers?.[0] ?? new URL("/", url).href;
    const meta = await discoverAuthorizationServerMetadata(issuer);
    const endpoint = meta && "revocation_endpoint" in meta ? meta.revocation_endpoint : undefined;
    if (!endpoint) return;
    const info = await client();
    for (const [token, hint] of [
      [tokens.refresh_token, "refresh_token"],
      [tokens.access_token, "access_token"],
    ] as const) {
      if (!token) continue;
      const body = new URLSearchParams({ token, token_type_hint: hint });
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
      if (info?.client_secret)
        headers.authorization = `Basic ${Buffer.from(`${info.client_id}:${info.client_secret}`).toString("base64")}`;
      else if (info) body.set("client_id", info.client_id);
      await fetch(endpoint, { method: "POST", headers, body });
    }
  } catch {
    // Revocation is best effort (RFC 7009 lets a server refuse); the tokens are deleted regardless.
  }
}
