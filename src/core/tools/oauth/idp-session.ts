/**
 * A person's sign-in at the enterprise IdP, for `"scope": "user"` servers with `"grant": "id_jag"`:
 * the extension's §3 single sign-on, as an OpenID Connect authorization-code flow with PKCE that
 * comes back to Neo's one callback (`/mcp/oauth/callback`). One sign-in serves every such server:
 * the person's ID token (and refresh token, when the IdP offers `offline_access`) is kept sealed in
 * the vault under `IDP_ALIAS`, and each server's ID-JAG is asked for with it. An expired ID token is
 * renewed with the refresh token; when that fails the sign-in is forgotten, so the person's next
 * turn sends them a new link. The deployment's ID token is `id_token_file` instead.
 *
 * The flow's `state` and verifier are bound to the person in the vault like a server's sign-in
 * (single use, expiring); the IdP checks the verifier against the code, so a code from another
 * person's flow is refused there.
 */
import { createHash, randomBytes } from "node:crypto";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { z } from "zod";
import type { EnterpriseIdp } from "../manifest.js";
import { jwtClaims } from "./account.js";
import { idTokenFromFile } from "./id-jag.js";
import { EnterpriseIdpError, idpMetadata, postAsClient, postToIdp } from "./idp.js";
import type { OAuthPrincipal, OAuthVault } from "./vault.js";

/** Where a person's IdP sign-in is kept: never a server alias (those start alphanumeric). */
export const IDP_ALIAS = "@idp";
/** An ID token this close to its `exp` is renewed first: the exchange must not race its expiry. */
const EXPIRY_MARGIN_MS = 60_000;

const idpTokens = z.object({
  access_token: z.string(),
  token_type: z.string(),
  id_token: z.string().min(1),
  refresh_token: z.string().optional(),
});
const idClaims = z.object({ exp: z.number() });

export interface IdpSessions {
  /** Start `principal`'s sign-in: the IdP's authorization URL, its flow recorded in the vault. */
  authorizationUrl(principal: OAuthPrincipal): Promise<string>;
  /** The callback's code for that flow: keep the ID token. Throws when the IdP refuses. */
  complete(principal: OAuthPrincipal, code: string, verifier: string): Promise<void>;
  /** The ID token to present for `principal`, renewed when expired. Throws when there is none. */
  idToken(principal: OAuthPrincipal): Promise<string>;
  signedIn(principal: OAuthPrincipal): Promise<boolean>;
  /** Revoke the refresh token at the IdP (RFC 7009, best effort) and forget the sign-in. */
  signOut(principal: OAuthPrincipal): Promise<void>;
}

export interface IdpSessionOptions {
  idp: EnterpriseIdp;
  vault: OAuthVault;
  /** `NEO_PUBLIC_URL` + `CALLBACK_PATH`, registered at the IdP for Neo's client. */
  redirectUrl: string;
  now?: () => number;
}

function expiresAt(idToken: string): number | undefined {
  // Not a readable JWT: the IdP judges it at the exchange.
  const claims = idClaims.safeParse(jwtClaims(idToken));
  return claims.success ? claims.data.exp * 1000 : undefined;
}

export function createIdpSessions(o: IdpSessionOptions): IdpSessions {
  const now = o.now ?? Date.now;
  const { idp, vault } = o;

  async function keep(principal: OAuthPrincipal, json: unknown, previous?: OAuthTokens): Promise<string> {
    const t = idpTokens.safeParse(json);
    if (!t.success) throw new EnterpriseIdpError("the sign-in answer carries no ID token");
    // A refresh answer may leave the refresh token out: the old one stays good (RFC 6749 §6).
    const refresh = t.data.refresh_token ?? previous?.refresh_token;
    await vault.saveTokens(principal, IDP_ALIAS, {
      ...t.data,
      ...(refresh ? { refresh_token: refresh } : {}),
    });
    return t.data.id_token;
  }

  async function forget(principal: OAuthPrincipal): Promise<void> {
    await vault.clear(principal, IDP_ALIAS, "all");
  }

  return {
    async authorizationUrl(principal) {
      const meta = await idpMetadata(idp);
      if (!meta.authorization_endpoint)
        throw new EnterpriseIdpError("its metadata has no authorization_endpoint");
      const state = randomBytes(24).toString("base64url");
      const verifier = randomBytes(32).toString("base64url");
      await vault.begin(state, principal, IDP_ALIAS, verifier);
      const url = new URL(meta.authorization_endpoint);
      const offline = meta.scopes_supported?.includes("offline_access");
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: idp.client_id,
        redirect_uri: o.redirectUrl,
        scope: offline ? "openid offline_access" : "openid",
        state,
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
      }).toString();
      return url.href;
    },
    async complete(principal, code, verifier) {
      const body = new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: o.redirectUrl,
        code_verifier: verifier,
      });
      await keep(principal, await postToIdp(idp, body, "the sign-in"));
    },
    async idToken(principal) {
      if (principal.kind === "deployment") return idTokenFromFile(idp);
      const held = await vault.tokens(principal, IDP_ALIAS);
      if (!held?.id_token) throw new EnterpriseIdpError("the person has not signed in at the IdP");
      const exp = expiresAt(held.id_token);
      if (exp === undefined || exp - EXPIRY_MARGIN_MS > now()) return held.id_token;
      if (!held.refresh_token) {
        await forget(principal);
        throw new EnterpriseIdpError("the person's sign-in at the IdP has expired");
      }
      const body = new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: held.refresh_token,
        scope: "openid",
      });
      try {
        return await keep(principal, await postToIdp(idp, body, "renewing the sign-in"), held);
      } catch (err) {
        if (err instanceof EnterpriseIdpError) await forget(principal);
        throw err;
      }
    },
    signedIn: async (principal) => (await vault.tokens(principal, IDP_ALIAS)) !== undefined,
    async signOut(principal) {
      const held = await vault.tokens(principal, IDP_ALIAS);
      try {
        const endpoint = held?.refresh_token ? (await idpMetadata(idp)).revocation_endpoint : undefined;
        if (endpoint && held?.refresh_token)
          await postAsClient(
            idp,
            endpoint,
            new URLSearchParams({ token: held.refresh_token, token_type_hint: "refresh_token" }),
            "the revocation",
          );
      } catch {
        // Revocation is best effort (RFC 7009 lets a server refuse); the sign-in is forgotten regardless.
      }
      await forget(principal);
    },
  };
}
