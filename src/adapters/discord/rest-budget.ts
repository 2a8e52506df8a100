/**
 * Discord's global rate limit spent by the whole fleet. Discord allows a bot 50 requests a second
 * across every process and shard it runs (discord.com/developers/docs/topics/rate-limits#global-rate-limit),
 * and counts each 429 towards the IP ban at 10,000 invalid requests in 10 minutes; discord.js
 * counts per process, so N shards would send N times that. Every request discord.js makes with the
 * bot's token first takes room in one store budget (Store.rateWindow: one round trip), and a global
 * 429 seen by any process blocks that budget for all of them for its Retry-After.
 *
 * Interaction endpoints (`/interactions/…`) are not bound by the global limit (same page), so they
 * never wait: an interaction must be answered within 3 seconds.
 * Per-route buckets stay discord.js's, per process: Discord computes them for the bot, so each
 * process reads the fleet's remaining count in every answer's `X-RateLimit-*` headers.
 */
import { createHash } from "node:crypto";
import type { ResponseLike } from "discord.js";
import { rateBudgetKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";

/** Discord's documented global limit per bot. */
export const DISCORD_GLOBAL_LIMIT = { limit: 50, windowMs: 1000 };

/**
 * The budget's window is the documented one widened by this fraction, as the Slack gate's is: the
 * platform's second and ours need not start together.
 */
const MARGIN = 0.1;

/** How long one request may take once it has its room (discord.js's own default timeout). */
export const DISCORD_REQUEST_TIMEOUT_MS = 15_000;

/** The longest a request waiting for room sleeps before asking again. */
const POLL_MS = 100;

export type MakeRequest = (url: string, init: RequestInit) => Promise<ResponseLike>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Count a request from its answer, off the answer's path (not awaited). Should the store fail, the
 * request keeps counting until its hold ends: the budget errs towards sending less.
 */
function settle(store: Store, key: string, id: string, windowMs: number): void {
  store.rateWindow(key, { op: "settle", id, windowMs }).catch((err: unknown) => {
    log.warn({ err: (err as Error).message }, "discord budget: a request's answer was not recorded");
  });
}

/** The bot a request speaks for, as a budget key (a hash: the token itself never leaves the process). */
function botOf(authorization: string): string {
  return createHash("sha256").update(authorization).digest("hex").slice(0, 16);
}

function authorizationOf(init: RequestInit): string | undefined {
  const h = init.headers;
  if (!h) return undefined;
  if (h instanceof Headers) return h.get("authorization") ?? undefined;
  if (Array.isArray(h)) return h.find(([k]) => k.toLowerCase() === "authorization")?.[1];
  const rec = h as Record<string, string>;
  return rec.Authorization ?? rec.authorization;
}

/** A global 429's wait in ms (Retry-After, seconds), or undefined for any other answer. */
function globalRetryMs(res: ResponseLike): number | undefined {
  if (res.status !== 429) return undefined;
  const global = res.headers.get("x-ratelimit-global") ?? "";
  const scope = res.headers.get("x-ratelimit-scope") ?? "";
  if (global.toLowerCase() !== "true" && scope !== "global") return undefined;
  const after = Number(res.headers.get("retry-after") ?? "1");
  return Math.max(0, Number.isFinite(after) ? after : 1) * 1000;
}

/**
 * discord.js's `makeRequest` behind the fleet's global budget. The wait for room comes before the
 * request's own timeout starts, as discord.js's own rate-limit waits do.
 */
export function fleetBudgetedRequest(store: Store, inner: MakeRequest): MakeRequest {
  const rule = {
    limit: DISCORD_GLOBAL_LIMIT.limit,
    windowMs: Math.ceil(DISCORD_GLOBAL_LIMIT.windowMs * (1 + MARGIN)),
  };
  let seq = 0;
  const prefix = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  return async (url, init) => {
    const auth = authorizationOf(init);
    const bound = auth !== undefined && !new URL(url).pathname.includes("/interactions/");
    const key = bound ? rateBudgetKey("discord", botOf(auth), "global") : undefined;
    const id = `${prefix}-${++seq}`;
    if (key) {
      // Held for the request's whole flight, then counted from its answer (settle): Discord saw it
      // no later than that, so a later request never lands inside its second, whatever the latency.
      for (;;) {
        const wait = await store.rateWindow(key, {
          op: "take",
          id,
          ...rule,
          holdMs: DISCORD_REQUEST_TIMEOUT_MS + rule.windowMs,
        });
        if (wait === 0) break;
        // A wait counts requests still in flight as held to their timeout; their answers free
        // room far sooner, so look again soon.
        await sleep(Math.min(wait, POLL_MS));
      }
    }
    try {
      const res = await inner(url, { ...init, signal: AbortSignal.timeout(DISCORD_REQUEST_TIMEOUT_MS) });
      const blockMs = globalRetryMs(res);
      if (blockMs !== undefined && key)
        await store.rateWindow(key, { op: "block", ms: blockMs, windowMs: rule.windowMs });
      return res;
    } finally {
      if (key) settle(store, key, id, rule.windowMs);
    }
  };
}
