/**
 * Signing in to OAuth-protected MCP servers, for the chat layer and the callback route: start a
 * person's (or the deployment's) flow, finish it from the redirect, say who is not signed in where,
 * disconnect (revoking per RFC 7009 where the server supports it) and erase a person's tokens.
 * A per-person `id_jag` server's sign-in is the person's one sign-in at the enterprise IdP
 * (`idp-session.ts`), shared by every such server: one link, one disconnect.
 */
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import type { UserKey } from "../../keys.js";
import { accountOf } from "./account.js";
import { EnterpriseIdpError } from "./idp.js";
import { createIdpSessions, IDP_ALIAS } from "./idp-session.js";
import { createOAuthProvider } from "./provider.js";
import { revokeAtServer } from "./revoke.js";
import type {
  LeftOut,
  OAuthConnections,
  OAuthConnectionsOptions,
  OAuthServer,
  SignInOffer,
} from "./sign-in-types.js";
import { DEPLOYMENT, type OAuthPrincipal, principalId } from "./vault.js";

/** An OAuth error code as RFC 6749 §5.2 allows it (printable ASCII, no `"` or `\`), else a stand-in. */
const oauthCode = (code: string | undefined) =>
  code && /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(code) ? code : "refused";

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
    if (tokens)
      await revokeAtServer(server(alias).url, tokens, () => provider(principal, alias).clientInformation());
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

  /**
   * A sign-in of `principal` to `alias` (`IDP_ALIAS`: at the IdP) finished: the account it
   * connected, kept with the tokens and noted for the person's next turn to confirm.
   */
  async function finished(principal: OAuthPrincipal, alias: string): Promise<string | undefined> {
    const tokens = await o.vault.tokens(principal, alias);
    const metadata = (await o.vault.discovery(principal, alias))?.authorizationServerMetadata;
    const account = tokens ? await accountOf({ ...tokens }, metadata) : undefined;
    if (account) await o.vault.saveAccount(principal, alias, account);
    if (principal.kind === "user") await o.vault.addConnectedNote(principal, { alias, account });
    return account;
  }

  /**
   * `principal` has no token for the `id_jag` server `alias`: ask for one now (ID-JAG, then the
   * server's token). Left out when they are not signed in at the IdP, or its policy refuses them
   * this server; a failure of the server itself is for its connection to report.
   */
  async function tokenViaIdp(principal: OAuthPrincipal, alias: string): Promise<LeftOut | undefined> {
    if (!sessions || !(await sessions.signedIn(principal))) return { alias };
    try {
      await auth(provider(principal, alias), { serverUrl: server(alias).url });
      await o.vault.clearRefusal(principal, alias);
      return undefined;
    } catch (err) {
      if (!(err instanceof EnterpriseIdpError)) return undefined;
      // The IdP sign-in ended (expired, not renewable): the person signs in again.
      if (!(await sessions.signedIn(principal))) return { alias };
      return err.code ? { alias, refused: oauthCode(err.code) } : undefined;
    }
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
      if (pending.alias === IDP_ALIAS && sessions) {
        try {
          await sessions.complete(principal, code, pending.verifier);
        } catch {
          return { ok: false, reason: "Your company's sign-in refused this. Ask Neo for a new link." };
        }
        return { ok: true, alias: viaIdp.join(", "), account: await finished(principal, IDP_ALIAS) };
      }
      try {
        const p = provider(principal, pending.alias, undefined, pending.verifier);
        const result = await auth(p, { serverUrl: server(pending.alias).url, authorizationCode: code });
        if (result !== "AUTHORIZED") return { ok: false, reason: "The server did not sign you in." };
      } catch {
        // The code was not issued for this flow (another person's, or reused): the exchange fails.
        return { ok: false, reason: "The server refused this sign-in. Ask Neo for a new link." };
      }
      return { ok: true, alias: pending.alias, account: await finished(principal, pending.alias) };
    },
    async unauthorized(user) {
      const principal: OAuthPrincipal = { kind: "user", user };
      const out: LeftOut[] = [];
      for (const [alias, s] of o.servers) {
        if (!s.perUser || (await o.vault.tokens(principal, alias))) continue;
        const left = viaIdp.includes(alias) ? await tokenViaIdp(principal, alias) : { alias };
        if (left) out.push(left);
      }
      return out;
    },
    async tellRefused(user, alias, code, send) {
      const principal = principalOf(alias, user);
      if (!(await o.vault.noteRefusal(principal, alias, code))) return false;
      if (await send()) return true;
      await o.vault.clearRefusal(principal, alias); // not told after all: the next turn tries again
      return false;
    },
    async takeFinished(user) {
      const notes = await o.vault.takeConnectedNotes({ kind: "user", user });
      return notes.map((n) => ({
        server: n.alias === IDP_ALIAS ? viaIdp.join(", ") : n.alias,
        account: n.account,
      }));
    },
    async connected(user) {
      const principal: OAuthPrincipal = { kind: "user", user };
      // An id_jag server's account is the person's at the IdP: one sign-in serves them all.
      const held = (await o.vault.connected(principal)).filter((a) => a !== IDP_ALIAS && !viaIdp.includes(a));
      const out = await Promise.all(
        held.map(async (server) => ({ server, account: await o.vault.account(principal, server) })),
      );
      if (sessions && (await sessions.signedIn(principal))) {
        const account = await o.vault.account(principal, IDP_ALIAS);
        for (const server of viaIdp) out.push({ server, account });
      }
      return out.sort((a, b) => (a.server < b.server ? -1 : 1));
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
      await o.vault.takeConnectedNotes(principal); // unconfirmed sign-ins: nothing of theirs is left
    },
    perUser: (alias) => o.servers.get(alias)?.perUser === true,
  };
}
