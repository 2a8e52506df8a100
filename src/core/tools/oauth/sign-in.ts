/**
 * Signing in to OAuth-protected MCP servers, for the chat layer and the callback route: start a
 * person's (or the deployment's) flow, finish it from the redirect, say who is not signed in where,
 * disconnect (revoking per RFC 7009 where the server supports it) and erase a person's tokens.
 * A per-person `id_jag` server's sign-in is the person's one sign-in at the enterprise IdP
 * (`idp-session.ts`), shared by every such server: one link, one disconnect.
 */
import {
  auth,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  type OAuthClientProvider,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type { UserKey } from "../../keys.js";
import type { OAuthSettings } from "../manifest.js";
import { createIdpSessions, IDP_ALIAS } from "./idp-session.js";
import { createOAuthProvider } from "./provider.js";
import { DEPLOYMENT, type OAuthPrincipal, type OAuthVault, principalId } from "./vault.js";

export const CALLBACK_PATH = "/mcp/oauth/callback";

export interface OAuthServer {
  url: string;
  settings: OAuthSettings;
  /** `user`: each person signs in; else the deployment does. */
  perUser: boolean;
}

/** What `offerSignIn` did: sent a link, found one sent earlier still good, could not send, or found tokens. */
export type SignInOffer = "sent" | "sent-earlier" | "not-sent" | "signed-in";

export type CallbackOutcome = { ok: true; alias: string } | { ok: false; reason: string };

export interface OAuthConnections {
  /** The provider a server's transport authenticates with, for `principal`. */
  provider(principal: OAuthPrincipal, alias: string, onUrl?: (url: URL) => void): OAuthClientProvider;
  /**
   * Offer `user` (the deployment, for a shared server) a sign-in to `alias`: start a flow and hand
   * its URL to `send` (which delivers it privately, true when it did) — unless a link sent earlier
   * is still good (`claimOffer`), or they are signed in after all.
   */
  offerSignIn(
    user: UserKey | undefined,
    alias: string,
    send: (url: string) => Promise<boolean>,
  ): Promise<SignInOffer>;
  /** The person asked for a link (`/neo connections signin`): a new one, the earlier one's offer void; undefined for no per-person server. */
  signInLink(user: UserKey, alias: string): Promise<string | "signed-in" | undefined>;
  /** The redirect came back: finish the flow `state` names, once. Nothing is stored when refused. */
  complete(state: string, code: string): Promise<CallbackOutcome>;
  /** The per-person OAuth servers `user` has not signed in to: a turn leaves their tools out. */
  unauthorized(user: UserKey): Promise<string[]>;
  connected(user: UserKey): Promise<string[]>;
  disconnect(user: UserKey | undefined, alias: string): Promise<void>;
  eraseTokens(user: UserKey): Promise<void>;
  /** Whether `alias` is an OAuth server signed in per person. */
  perUser(alias: string): boolean;
}

export interface OAuthConnectionsOptions {
  vault: OAuthVault;
  servers: ReadonlyMap<string, OAuthServer>;
  /** `NEO_PUBLIC_URL` + `CALLBACK_PATH`. */
  redirectUrl: string;
}

export function createOAuthConnections(o: OAuthConnectionsOptions): OAuthConnections {
  const principalOf = (alias: string, user: UserKey | undefined): OAuthPrincipal => {
    if (!o.servers.get(alias)?.perUser) return DEPLOYMENT;
    if (!user) throw new Error(`server "${alias}" signs in each person: a user is needed`);
    return { kind: "user", user };
  };
  const server = (alias: string): OAuthServer => {
    const s = o.servers.get(alias);
    if (!s) throw new Error(`no OAuth server "${alias}" in the manifest`);
    return s;
  };
  // One enterprise IdP per manifest: every id_jag server's settings carry it.
  const idp = [...o.servers.values()].find((s) => s.settings.idp)?.settings.idp;
  const sessions = idp ? createIdpSessions({ idp, vault: o.vault, redirectUrl: o.redirectUrl }) : undefined;
  /** The per-person servers whose sign-in is the person's IdP sign-in. */
  const viaIdp = [...o.servers].filter(([, s]) => s.perUser && s.settings.grant === "id_jag").map(([a]) => a);
  const provider = (
    principal: OAuthPrincipal,
    alias: string,
    onUrl?: (url: URL) => void,
    verifier?: string,
  ) =>
    createOAuthProvider({
      vault: o.vault,
      principal,
      alias,
      settings: server(alias).settings,
      redirectUrl: o.redirectUrl,
      onAuthorizationUrl: onUrl ?? (() => {}),
      ...(verifier ? { verifier } : {}),
      ...(sessions ? { idToken: () => sessions.idToken(principal) } : {}),
    });

  async function revoke(principal: OAuthPrincipal, alias: string): Promise<void> {
    const tokens = await o.vault.tokens(principal, alias);
    if (!tokens) return;
    const { url } = server(alias);
    try {
      const prm = await discoverOAuthProtectedResourceMetadata(url).catch(() => undefined);
      const issuer = prm?.authorization_servers?.[0] ?? new URL("/", url).href;
      const meta = await discoverAuthorizationServerMetadata(issuer);
      const endpoint = meta && "revocation_endpoint" in meta ? meta.revocation_endpoint : undefined;
      if (!endpoint) return;
      const client = await provider(principal, alias).clientInformation();
      for (const [token, hint] of [
        [tokens.refresh_token, "refresh_token"],
        [tokens.access_token, "access_token"],
      ] as const) {
        if (!token) continue;
        const body = new URLSearchParams({ token, token_type_hint: hint });
        const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
        if (client?.client_secret)
          headers.authorization = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}`;
        else if (client) body.set("client_id", client.client_id);
        await fetch(endpoint, { method: "POST", headers, body });
      }
    } catch {
      // Revocation is best effort (RFC 7009 lets a server refuse); the tokens are deleted regardless.
    }
  }

  async function disconnectPrincipal(principal: OAuthPrincipal, alias: string): Promise<void> {
    await revoke(principal, alias);
    await o.vault.clear(principal, alias, "tokens");
  }

  /** A person's IdP sign-in goes with every server it serves: their tokens are revoked too. */
  async function signOutOfIdp(principal: OAuthPrincipal): Promise<void> {
    for (const alias of viaIdp) await disconnectPrincipal(principal, alias);
    await sessions?.signOut(principal);
  }

  /** Offer `principal` the IdP sign-in: one link for every `viaIdp` server. */
  async function offerIdpSignIn(
    principal: OAuthPrincipal,
    send: (url: string) => Promise<boolean>,
  ): Promise<SignInOffer> {
    if (!sessions || (await sessions.signedIn(principal))) return "signed-in";
    if (!(await o.vault.claimOffer(principal, IDP_ALIAS))) return "sent-earlier";
    let outcome: SignInOffer = "not-sent";
    try {
      if (await send(await sessions.authorizationUrl(principal))) outcome = "sent";
      return outcome;
    } finally {
      if (outcome !== "sent") await o.vault.releaseOffer(principal, IDP_ALIAS);
    }
  }

  async function offerSignIn(
    user: UserKey | undefined,
    alias: string,
    send: (url: string) => Promise<boolean>,
  ): Promise<SignInOffer> {
    const principal = principalOf(alias, user);
    if (viaIdp.includes(alias)) return offerIdpSignIn(principal, send);
    // Signed in meanwhile (the SDK's `auth` would start a new flow over an access token).
    if (await o.vault.tokens(principal, alias)) return "signed-in";
    if (!(await o.vault.claimOffer(principal, alias))) return "sent-earlier";
    let url: URL | undefined;
    let outcome: SignInOffer = "not-sent";
    try {
      const result = await auth(
        provider(principal, alias, (u) => {
          url = u;
        }),
        { serverUrl: server(alias).url },
      );
      if (result === "AUTHORIZED") outcome = "signed-in";
      else if (url && (await send(url.href))) outcome = "sent";
      return outcome;
    } finally {
      // Nothing reached the person: their next turn may offer again.
      if (outcome !== "sent") await o.vault.releaseOffer(principal, alias);
    }
  }

  return {
    provider: (principal, alias, onUrl) => provider(principal, alias, onUrl),
    offerSignIn,
    async signInLink(user, alias) {
      if (!o.servers.get(alias)?.perUser) return undefined;
      const principal = principalOf(alias, user);
      await o.vault.releaseOffer(principal, viaIdp.includes(alias) ? IDP_ALIAS : alias);
      let link = "";
      const offer = await offerSignIn(user, alias, async (url) => {
        link = url;
        return true;
      });
      return offer === "signed-in" ? "signed-in" : link;
    },
    async complete(state, code) {
      const pending = await o.vault.take(state);
      const known = pending && (o.servers.has(pending.alias) || (pending.alias === IDP_ALIAS && sessions));
      if (!pending || !known)
        return {
          ok: false,
          reason: "This sign-in link is unknown, already used or expired. Ask Neo for a new one.",
        };
      const principal: OAuthPrincipal =
        pending.principalId === principalId(DEPLOYMENT)
          ? DEPLOYMENT
          : { kind: "user", user: pending.principalId };
      if (pending.alias === IDP_ALIAS && sessions)
        return sessions.complete(principal, code, pending.verifier).then(
          () => ({ ok: true as const, alias: viaIdp.join(", ") }),
          () => ({
            ok: false as const,
            reason: "Your company's sign-in refused this. Ask Neo for a new link.",
          }),
        );
      try {
        const p = provider(principal, pending.alias, undefined, pending.verifier);
        const result = await auth(p, { serverUrl: server(pending.alias).url, authorizationCode: code });
        if (result !== "AUTHORIZED") return { ok: false, reason: "The server did not sign you in." };
        return { ok: true, alias: pending.alias };
      } catch {
        // The code was not issued for this flow (another person's, or reused): the exchange fails.
        return { ok: false, reason: "The server refused this sign-in. Ask Neo for a new link." };
      }
    },
    async unauthorized(user) {
      const principal: OAuthPrincipal = { kind: "user", user };
      const out: string[] = [];
      const idpSignedIn = (await sessions?.signedIn(principal)) === true;
      for (const [alias, s] of o.servers)
        if (
          s.perUser &&
          !(await o.vault.tokens(principal, alias)) &&
          !(viaIdp.includes(alias) && idpSignedIn)
        )
          out.push(alias);
      return out;
    },
    async connected(user) {
      const principal: OAuthPrincipal = { kind: "user", user };
      const held = (await o.vault.connected(principal)).filter((a) => a !== IDP_ALIAS);
      const idpSignedIn = (await sessions?.signedIn(principal)) === true;
      return [...new Set([...held, ...(idpSignedIn ? viaIdp : [])])].sort();
    },
    disconnect: (user, alias) =>
      viaIdp.includes(alias)
        ? signOutOfIdp(principalOf(alias, user))
        : disconnectPrincipal(principalOf(alias, user), alias),
    async eraseTokens(user) {
      const principal: OAuthPrincipal = { kind: "user", user };
      await signOutOfIdp(principal);
      for (const alias of await o.vault.connected(principal)) await disconnectPrincipal(principal, alias);
      for (const alias of o.servers.keys()) await o.vault.clear(principal, alias, "all");
      await o.vault.clear(principal, IDP_ALIAS, "all");
    },
    perUser: (alias) => o.servers.get(alias)?.perUser === true,
  };
}
