/**
 * Where OAuth credentials live in the store, per (principal, server): tokens and the client's
 * registration, sealed (`seal.ts`); and sign-in flows in progress by `state`, each bound to the
 * principal and server that started it, with its PKCE verifier, single use and expiring. Keys carry
 * the principal's hash tag like every per-user key (`keys.ts`).
 */
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { z } from "zod";
import type { Store } from "../../../store/types.js";
import { updateAtomically } from "../../../store/update.js";
import { cortexOwner, hashTag, type UserKey } from "../../keys.js";
import { open, type SealKey, seal } from "./seal.js";

/** Whose credentials: one person's (`scope: user` servers) or the deployment's. */
export type OAuthPrincipal = { kind: "user"; user: UserKey } | { kind: "deployment" };

export const DEPLOYMENT: OAuthPrincipal = { kind: "deployment" };
/** A sign-in link is good for this long. */
export const STATE_TTL_MS = 10 * 60_000;
const PREFIX = "mcp:oauth";

/** The store id of a principal: a person is one across a platform's places (`cortexOwner`). */
export function principalId(p: OAuthPrincipal): string {
  return p.kind === "user" ? cortexOwner(p.user) : "@deployment";
}

export function credentialKey(p: OAuthPrincipal, alias: string): string {
  return `${PREFIX}:cred:${hashTag(principalId(p))}:${alias}`;
}
export const stateKey = (state: string) => `${PREFIX}:state:${hashTag(state)}`;
/** A sign-in link sent to a principal for a server and not used yet (`claimOffer`). */
const offerKey = (id: string, alias: string) => `${PREFIX}:offer:${hashTag(id)}:${alias}`;
/** The refusal a principal was last told of for a server (`noteRefusal`). */
const refusalKey = (id: string, alias: string) => `${PREFIX}:refused:${hashTag(id)}:${alias}`;
/** Sign-ins finished since the principal's last turn, to confirm to them there (`takeConnectedNotes`). */
const connectedKey = (id: string) => `${PREFIX}:connected:${hashTag(id)}`;

/**
 * Sealed tokens, client and account (who the sign-in connected, as the server or IdP named them);
 * `discovery` (public metadata) is what the redirect's callback reuses.
 */
const sealedRecord = z.object({
  tokens: z.string().optional(),
  account: z.string().optional(),
  client: z.string().optional(),
  discovery: z.record(z.string(), z.unknown()).optional(),
});
const pendingSchema = z.object({
  principal: z.string(),
  alias: z.string(),
  verifier: z.string(),
  expiresAt: z.number(),
});
const offerSchema = z.object({ expiresAt: z.number() });
const refusalSchema = z.object({ code: z.string() });
/** A finished sign-in: the server and the account it connected (undefined when nothing named it). */
export interface ConnectedNote {
  alias: string;
  account: string | undefined;
}
const connectedNotes = z.array(z.object({ alias: z.string(), account: z.string().optional() }));
/** How long an unconfirmed sign-in waits for the person's next turn. */
const CONNECTED_NOTE_TTL_MS = 7 * 24 * 3600_000;
export type PendingSignIn = { principalId: string; alias: string; verifier: string };

export interface OAuthVault {
  tokens(p: OAuthPrincipal, alias: string): Promise<OAuthTokens | undefined>;
  saveTokens(p: OAuthPrincipal, alias: string, tokens: OAuthTokens): Promise<void>;
  /** The account the sign-in to `alias` connected, when the server or IdP named it. */
  account(p: OAuthPrincipal, alias: string): Promise<string | undefined>;
  saveAccount(p: OAuthPrincipal, alias: string, account: string): Promise<void>;
  client(p: OAuthPrincipal, alias: string): Promise<OAuthClientInformationMixed | undefined>;
  saveClient(p: OAuthPrincipal, alias: string, info: OAuthClientInformationMixed): Promise<void>;
  /** Where the server's metadata was found, kept so the callback's token exchange finds it again. */
  discovery(p: OAuthPrincipal, alias: string): Promise<OAuthDiscoveryState | undefined>;
  saveDiscovery(p: OAuthPrincipal, alias: string, state: OAuthDiscoveryState): Promise<void>;
  /** Forget the tokens (and the account they are for), the registration, the discovered metadata, or all. */
  clear(p: OAuthPrincipal, alias: string, what: "tokens" | "client" | "discovery" | "all"): Promise<void>;
  /** Aliases `p` holds tokens for. */
  connected(p: OAuthPrincipal): Promise<string[]>;
  /** Record a flow started by `p` on `alias`. */
  begin(state: string, p: OAuthPrincipal, alias: string, verifier: string): Promise<void>;
  /** The flow of `state`, removed (single use), and its link's offer released; undefined when unknown, used or expired. */
  take(state: string): Promise<PendingSignIn | undefined>;
  /**
   * Claim sending `p` a sign-in link to `alias`: false while a link sent earlier is still good
   * (unused, younger than `STATE_TTL_MS`), so a person is not sent one on every turn. Atomic: of
   * two turns at once, one sends.
   */
  claimOffer(p: OAuthPrincipal, alias: string): Promise<boolean>;
  /** The link was not sent after all (or is void): the next turn may send one. */
  releaseOffer(p: OAuthPrincipal, alias: string): Promise<void>;
  /**
   * Record that `alias` refused `p` with `code`: true when this is news to tell them (no refusal,
   * or another code, recorded before), false when they were told already. Atomic like `claimOffer`.
   */
  noteRefusal(p: OAuthPrincipal, alias: string, code: string): Promise<boolean>;
  /** Access came back (or the sign-in went): a later refusal is news again. */
  clearRefusal(p: OAuthPrincipal, alias: string): Promise<void>;
  /** A sign-in of `p` finished: confirm it at their next turn. */
  addConnectedNote(p: OAuthPrincipal, note: ConnectedNote): Promise<void>;
  /** The sign-ins finished since `p`'s last turn, removed (each confirmed once). */
  takeConnectedNotes(p: OAuthPrincipal): Promise<ConnectedNote[]>;
}

export function createOAuthVault(store: Store, key: SealKey, now: () => number = Date.now): OAuthVault {
  async function read(p: OAuthPrincipal, alias: string) {
    return sealedRecord.parse((await store.get(credentialKey(p, alias))) ?? {});
  }
  async function write(p: OAuthPrincipal, alias: string, rec: z.infer<typeof sealedRecord>) {
    if (!rec.tokens && !rec.client && !rec.discovery) await store.delete(credentialKey(p, alias));
    else await store.set(credentialKey(p, alias), rec);
  }
  return {
    async tokens(p, alias) {
      const t = (await read(p, alias)).tokens;
      return t ? (JSON.parse(open(key, t)) as OAuthTokens) : undefined;
    },
    async saveTokens(p, alias, tokens) {
      await write(p, alias, { ...(await read(p, alias)), tokens: seal(key, JSON.stringify(tokens)) });
    },
    async account(p, alias) {
      const a = (await read(p, alias)).account;
      return a ? open(key, a) : undefined;
    },
    async saveAccount(p, alias, account) {
      await write(p, alias, { ...(await read(p, alias)), account: seal(key, account) });
    },
    async client(p, alias) {
      const c = (await read(p, alias)).client;
      return c ? (JSON.parse(open(key, c)) as OAuthClientInformationMixed) : undefined;
    },
    async saveClient(p, alias, info) {
      await write(p, alias, { ...(await read(p, alias)), client: seal(key, JSON.stringify(info)) });
    },
    async discovery(p, alias) {
      return (await read(p, alias)).discovery as OAuthDiscoveryState | undefined;
    },
    async saveDiscovery(p, alias, state) {
      await write(p, alias, { ...(await read(p, alias)), discovery: { ...state } });
    },
    async clear(p, alias, what) {
      if (what === "all") {
        await store.delete(offerKey(principalId(p), alias));
        await store.delete(refusalKey(principalId(p), alias));
      }
      const rec = await read(p, alias);
      const tokensGo = what === "tokens" || what === "all";
      await write(p, alias, {
        tokens: tokensGo ? undefined : rec.tokens,
        account: tokensGo ? undefined : rec.account,
        client: what === "client" || what === "all" ? undefined : rec.client,
        discovery: what === "discovery" || what === "all" ? undefined : rec.discovery,
      });
    },
    async connected(p) {
      const prefix = `${PREFIX}:cred:${hashTag(principalId(p))}:`;
      const keys = await store.keys(prefix);
      const out: string[] = [];
      for (const k of keys) {
        const alias = k.slice(prefix.length);
        if ((await read(p, alias)).tokens) out.push(alias);
      }
      return out.sort();
    },
    async begin(state, p, alias, verifier) {
      const rec = {
        principal: principalId(p),
        alias,
        verifier: seal(key, verifier),
        expiresAt: now() + STATE_TTL_MS,
      };
      await store.set(stateKey(state), rec, STATE_TTL_MS);
    },
    async take(state) {
      if (!/^[A-Za-z0-9_-]{16,128}$/.test(state)) return undefined;
      const raw = pendingSchema.safeParse(await store.take(stateKey(state)));
      if (!raw.success) return undefined;
      // Used or expired alike, the link sent is spent: the person's next turn may get a new one.
      await store.delete(offerKey(raw.data.principal, raw.data.alias));
      if (raw.data.expiresAt <= now()) return undefined;
      return {
        principalId: raw.data.principal,
        alias: raw.data.alias,
        verifier: open(key, raw.data.verifier),
      };
    },
    async claimOffer(p, alias) {
      const k = offerKey(principalId(p), alias);
      const held = await store.get(k);
      const live = offerSchema.safeParse(held);
      if (live.success && live.data.expiresAt > now()) return false;
      return store.compareAndSet(k, held, { expiresAt: now() + STATE_TTL_MS }, STATE_TTL_MS);
    },
    async releaseOffer(p, alias) {
      await store.delete(offerKey(principalId(p), alias));
    },
    async noteRefusal(p, alias, code) {
      const k = refusalKey(principalId(p), alias);
      const held = await store.get(k);
      const told = refusalSchema.safeParse(held);
      if (told.success && told.data.code === code) return false;
      return store.compareAndSet(k, held, { code });
    },
    async clearRefusal(p, alias) {
      await store.delete(refusalKey(principalId(p), alias));
    },
    async addConnectedNote(p, note) {
      // Two sign-ins finishing at once: neither note is lost.
      await updateAtomically<unknown, void>(
        store,
        connectedKey(principalId(p)),
        (held) => {
          const notes = connectedNotes.safeParse(held);
          const kept = (notes.success ? notes.data : []).filter((n) => n.alias !== note.alias);
          return {
            next: [...kept, { alias: note.alias, ...(note.account ? { account: note.account } : {}) }],
            result: undefined,
          };
        },
        { ttlMs: CONNECTED_NOTE_TTL_MS },
      );
    },
    async takeConnectedNotes(p) {
      const notes = connectedNotes.safeParse(await store.take(connectedKey(principalId(p))));
      return notes.success ? notes.data.map((n) => ({ alias: n.alias, account: n.account })) : [];
    },
  };
}
