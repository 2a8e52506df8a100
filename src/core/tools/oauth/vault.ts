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

/** Sealed tokens and client; `discovery` (public metadata) is what the redirect's callback reuses. */
const sealedRecord = z.object({
  tokens: z.string().optional(),
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
export type PendingSignIn = { principalId: string; alias: string; verifier: string };

export interface OAuthVault {
  tokens(p: OAuthPrincipal, alias: string): Promise<OAuthTokens | undefined>;
  saveTokens(p: OAuthPrincipal, alias: string, tokens: OAuthTokens): Promise<void>;
  client(p: OAuthPrincipal, alias: string): Promise<OAuthClientInformationMixed | undefined>;
  saveClient(p: OAuthPrincipal, alias: string, info: OAuthClientInformationMixed): Promise<void>;
  /** Where the server's metadata was found, kept so the callback's token exchange finds it again. */
  discovery(p: OAuthPrincipal, alias: string): Promise<OAuthDiscoveryState | undefined>;
  saveDiscovery(p: OAuthPrincipal, alias: string, state: OAuthDiscoveryState): Promise<void>;
  /** Forget the tokens, the registration, the discovered metadata, or all. */
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
      if (what === "all") await store.delete(offerKey(principalId(p), alias));
      const rec = await read(p, alias);
      await write(p, alias, {
        tokens: what === "tokens" || what === "all" ? undefined : rec.tokens,
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
  };
}
