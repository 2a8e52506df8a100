/**
 * Durable usage counts in the Store, so they survive a restart and every instance on one Redis adds
 * to one total: per user and for the whole deployment, per UTC day and per UTC month, atomic
 * counters (`usage:<metric>:<period>:{<scope>}`, metric `nusd` (nano-USD, integers add exactly),
 * `tok` (all tokens), `ptok` (prompt tokens), `ctok` (prompt tokens read from the provider's cache)
 * or `calls`; scope a user key or `*` for the deployment). Every counter of one scope carries the
 * scope's hash tag, so a model call adds to all of a scope's counters in one atomic step (one
 * command on the wire, also on a Redis Cluster) and a scope's totals are one read.
 *
 * Until 2026-11 the deployment's counters were `usage:<metric>:<period>:*` (no hash tag). They are
 * no longer written, and still added into the deployment's totals (`LEGACY_DEPLOYMENT`) until the
 * pruning below has deleted the last of them (13 months). Counters have no TTL, so once a day days
 * older than 35 and months older than 13 are deleted.
 */
import type { Store } from "../../store/types.js";
import { hashTag, hashTagOf, type UserKey } from "../keys.js";
import { daysBefore, monthsBefore, utcDay, utcMonth } from "./periods.js";
import type { PeriodTotals } from "./types.js";

export const USAGE_PREFIX = "usage:";
/** The deployment's scope in the keys (no user key is `*`). */
export const DEPLOYMENT = "*";
const NANO = 1e9;
const METRICS = ["nusd", "tok", "ptok", "ctok", "calls"] as const;
type Metric = (typeof METRICS)[number];

export type Period = { kind: "day" | "month"; at: number };
const periodId = (p: Period): string => (p.kind === "day" ? utcDay(p.at) : utcMonth(p.at));
/** A counter's key under a scope's hash tag (`tag`: `hashTag(scope)`, made once per scope). */
const taggedKey = (metric: Metric, period: string, tag: string) =>
  `${USAGE_PREFIX}${metric}:${period}:${tag}`;
const key = (metric: Metric, period: string, scope: string) => taggedKey(metric, period, hashTag(scope));
/** The deployment's counter as written before it carried a hash tag (read, never written). */
const legacyDeploymentKey = (metric: Metric, period: string) =>
  `${USAGE_PREFIX}${metric}:${period}:${DEPLOYMENT}`;

export interface UsageCall {
  user?: UserKey | undefined;
  /** Prompt and completion tokens together. */
  tokens: number;
  promptTokens: number;
  /** Of `promptTokens`, read from the provider's prompt cache. */
  cachedTokens: number;
  costUsd: number;
  at: number;
}

export interface UsageStore {
  /** Count one model call for its user (if any) and the deployment, today and this month. */
  add(call: UsageCall): Promise<void>;
  /** One scope's totals (a user key, or `DEPLOYMENT`). */
  totals(scope: string, period: Period): Promise<PeriodTotals>;
  /** Every user with usage in the period, highest spend (then tokens) first. */
  users(period: Period): Promise<Array<{ user: UserKey } & PeriodTotals>>;
}

export function createUsageStore(store: Store): UsageStore {
  let prunedFor = "";

  const prune = async (at: number) => {
    const today = utcDay(at);
    if (prunedFor === today) return;
    prunedFor = today;
    const oldestDay = daysBefore(at, 35);
    const oldestMonth = monthsBefore(at, 13);
    for (const k of await store.keys(USAGE_PREFIX)) {
      const period = k.split(":")[2] ?? "";
      const old = period.length === 10 ? period < oldestDay : period < oldestMonth;
      if (old) await store.delete(k);
    }
  };

  const totals = async (scope: string, period: Period): Promise<PeriodTotals> => {
    const id = periodId(period);
    const [current, legacy] = await Promise.all([
      store.batch(METRICS.map((m) => ({ op: "get" as const, key: key(m, id, scope) }))),
      // Not one hash slot: one read each, only for the deployment.
      scope === DEPLOYMENT
        ? Promise.all(METRICS.map((m) => store.get<number>(legacyDeploymentKey(m, id))))
        : [],
    ]);
    const [nusd, tok, ptok, ctok, calls] = METRICS.map(
      (_, i) => ((current[i] as number | undefined) ?? 0) + (legacy[i] ?? 0),
    ) as [number, number, number, number, number];
    return { usd: nusd / NANO, tokens: tok, promptTokens: ptok, cachedTokens: ctok, calls };
  };

  return {
    async add(call) {
      const values = {
        nusd: Math.round(call.costUsd * NANO),
        tok: call.tokens,
        ptok: call.promptTokens,
        ctok: call.cachedTokens,
        calls: 1,
      };
      const scopes = call.user ? [call.user, DEPLOYMENT] : [DEPLOYMENT];
      const periods = [utcDay(call.at), utcMonth(call.at)];
      const counted = METRICS.filter((m) => values[m] > 0);
      // One atomic step per scope (its counters share its hash tag): two commands, not twenty.
      await Promise.all(
        scopes.map((scope) => {
          const tag = hashTag(scope);
          const steps: Array<{ key: string; by: number }> = [];
          for (const p of periods)
            for (const m of counted) steps.push({ key: taggedKey(m, p, tag), by: values[m] });
          return store.incrAll(steps);
        }),
      );
      await prune(call.at);
    },
    totals,
    async users(period) {
      const prefix = `${USAGE_PREFIX}calls:${periodId(period)}:`;
      const scopes = (await store.keys(prefix)).flatMap((k) => {
        const scope = hashTagOf(k);
        return scope === undefined || scope === DEPLOYMENT ? [] : [scope];
      });
      const rows = await Promise.all(scopes.map(async (user) => ({ user, ...(await totals(user, period)) })));
      return rows.sort((a, b) => b.usd - a.usd || b.tokens - a.tokens);
    },
  };
}
