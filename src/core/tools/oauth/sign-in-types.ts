/** What the sign-in layer (`sign-in.ts`) offers the chat layer and the callback route. */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { UserKey } from "../../keys.js";
import type { OAuthSettings } from "../manifest.js";
import type { OAuthPrincipal, OAuthVault } from "./vault.js";

export const CALLBACK_PATH = "/mcp/oauth/callback";

export interface OAuthServer {
  url: string;
  settings: OAuthSettings;
  /** `user`: each person signs in; else the deployment does. */
  perUser: boolean;
}

/** What `offerSignIn` did: sent a link, found one sent earlier still good, could not send, or found tokens. */
export type SignInOffer = "sent" | "sent-earlier" | "not-sent" | "signed-in";

/** `account`: who the sign-in connected, as the server or IdP named them (`account.ts`). */
export type CallbackOutcome =
  | { ok: true; alias: string; account: string | undefined }
  | { ok: false; reason: string };

/**
 * A per-person server a turn leaves out: not signed in, or (an `id_jag` server) the company's IdP
 * refused the person access to it, `refused` being its OAuth error code (RFC 6749 §5.2).
 */
export interface LeftOut {
  alias: string;
  refused?: string;
}

/** A person's sign-in: the server, and the account it connected when the server or IdP named it. */
export interface Connection {
  server: string;
  account: string | undefined;
}

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
  /**
   * The per-person OAuth servers whose tools `user`'s turn leaves out. An `id_jag` server's token is
   * asked for here when the person is signed in at the IdP, so its policy's refusal is known.
   */
  unauthorized(user: UserKey): Promise<LeftOut[]>;
  /**
   * Tell `user` through `send` that the IdP refused them `alias` with `code`, unless they were told
   * of that refusal already (once, not every turn); true when told.
   */
  tellRefused(user: UserKey, alias: string, code: string, send: () => Promise<boolean>): Promise<boolean>;
  /** The sign-ins `user` finished since their last turn, each handed out once, to confirm to them. */
  takeFinished(user: UserKey): Promise<Connection[]>;
  connected(user: UserKey): Promise<Connection[]>;
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
