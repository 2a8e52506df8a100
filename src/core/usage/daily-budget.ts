/**
 * Per-user daily token counts in the Store: one counter per user per UTC day
 * (`usage:day:<YYYY-MM-DD>:<user key>`), so every instance on the same Redis adds to and reads one
 * total, and the count survives a restart. Store failures fail OPEN: a Redis outage must not
 * silence the bot, so while the store cannot be read every user is admitted (and tokens spent
 * meanwhile are not counted); the outage is logged once as a warning, the recovery once as info.
 */

import type { Store } from "../../store/types.js";
import type { UserKey } from "../keys.js";
import type { BudgetRefusal } from "../llm/types.js";
import { log } from "../log.js";
import { budgetMessage } from "./format.js";

export const DAY_PREFIX = "usage:day:";
const DAY_MS = 86_400_000;

/** `2026-11-23` for the UTC day holding `at`. */
export const utcDay = (at: number): string => new Date(at).toISOString().slice(0, 10);
/** Epoch ms of the UTC midnight after `at`. */
export const nextUtcMidnight = (at: number): number => (Math.floor(at / DAY_MS) + 1) * DAY_MS;

export interface DailyBudgetOptions {
  store: Store;
  /** Tokens a user may spend per UTC day (`NEO_USER_DAILY_TOKENS`). */
  limit: number;
  now?: () => number;
}

export interface DailyBudget {
  readonly limit: number;
  /** Count `tokens` spent for `user` today. Never rejects (a store failure is logged). */
  add(user: UserKey, tokens: number): Promise<void>;
  /** A refusal when `user` is at or over the limit today; undefined to go ahead (or store down). */
  admit(user: UserKey): Promise<BudgetRefusal | undefined>;
  /** Today's counts, highest first. Rejects when the store cannot be read. */
  today(): Promise<Array<{ user: UserKey; tokens: number }>>;
  /** Resolves once every `add` already made has reached the store (or failed). */
  flushed(): Promise<void>;
}

const budgetLog = log.child({ component: "usage-budget" });

export function createDailyBudget(opts: DailyBudgetOptions): DailyBudget {
  const { store, limit } = opts;
  const now = opts.now ?? Date.now;
  const inflight = new Set<Promise<void>>();
  let degraded = false;
  let prunedFor = "";

  const failed = (err: unknown, op: string) => {
    if (!degraded) {
      budgetLog.warn(
        { err: (err as Error)?.message ?? String(err), op },
        "usage store unreachable: daily token budgets are NOT enforced until it returns",
      );
    }
    degraded = true;
  };
  const ok = () => {
    if (degraded) budgetLog.info("usage store reachable again: daily token budgets enforced");
    degraded = false;
  };

  // Counters have no TTL (Store.incr sets none), so days before yesterday are deleted once a day.
  const prune = async (today: string) => {
    if (prunedFor === today) return;
    prunedFor = today;
    const keep = new Set([today, utcDay(now() - DAY_MS)]);
    for (const key of await store.keys(DAY_PREFIX)) {
      if (!keep.has(key.slice(DAY_PREFIX.length, DAY_PREFIX.length + 10))) await store.delete(key);
    }
  };

  return {
    limit,
    add(user, tokens) {
      if (tokens <= 0) return Promise.resolve();
      const day = utcDay(now());
      const p: Promise<void> = store
        .incr(`${DAY_PREFIX}${day}:${user}`, tokens)
        .then(
          () => {
            ok();
            return prune(day).catch((err: unknown) =>
              budgetLog.warn({ err: (err as Error).message }, "pruning old usage days failed"),
            );
          },
          (err: unknown) => failed(err, "add"),
        )
        .finally(() => inflight.delete(p));
      inflight.add(p);
      return p;
    },
    async admit(user) {
      // Counts of calls that already finished must be in before reading, or a fast next turn slips by.
      await Promise.all([...inflight]);
      const at = now();
      let used: number;
      try {
        used = (await store.get<number>(`${DAY_PREFIX}${utcDay(at)}:${user}`)) ?? 0;
        ok();
      } catch (err) {
        failed(err, "admit");
        return undefined;
      }
      if (used < limit) return undefined;
      const resetsAt = nextUtcMidnight(at);
      return { user, used, limit, resetsAt, message: budgetMessage(used, limit, resetsAt - at) };
    },
    async today() {
      await Promise.all([...inflight]);
      const prefix = `${DAY_PREFIX}${utcDay(now())}:`;
      const keys = await store.keys(prefix);
      const rows = await Promise.all(
        keys.map(async (k) => ({ user: k.slice(prefix.length), tokens: (await store.get<number>(k)) ?? 0 })),
      );
      return rows.sort((a, b) => b.tokens - a.tokens);
    },
    flushed: async () => {
      await Promise.all([...inflight]);
    },
  };
}
