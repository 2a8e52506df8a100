/**
 * Usage and budgets, built once per process over the store and the client's ledger:
 * - every model call the ledger records is counted in the store (`usage-store.ts`): per user and for
 *   the deployment, per UTC day and month, surviving restarts and shared by instances;
 * - `budget` is the loop's USD budget (`usd-budget.ts`); present when prices are configured;
 * - `report`, `totals`, `statusLines` and `setBudget` back `/neo usage`, `/neo status` and
 *   `/neo budget`.
 * Store failures fail OPEN for the budget: a Redis outage must not silence the bot, so while the
 * store cannot be read every user is admitted (and spend meanwhile is not counted); the outage is
 * logged once as a warning, the recovery once as info.
 */
import type { Store } from "../../store/types.js";
import type { UserKey } from "../keys.js";
import type { UsageLedger } from "../llm/usage-ledger.js";
import { log } from "../log.js";
import { duration, pctOf, totalsText, usd } from "./format.js";
import { nextUtcMidnight, utcMonth } from "./periods.js";
import type { PeriodTotals, TurnBudget } from "./types.js";
import { createUsageStore, DEPLOYMENT, type Period } from "./usage-store.js";
import { createUsdBudget } from "./usd-budget.js";

export interface UsageTrackerOptions {
  store: Store;
  /** The ledger the LLM client records into. */
  ledger: UsageLedger;
  /** `NEO_BUDGET_USD_DAILY`: each user's default daily limit. */
  userDailyUsd?: number | undefined;
  /** `NEO_BUDGET_USD_DAILY_DEPLOYMENT`. */
  deploymentDailyUsd?: number | undefined;
  /** How many users `/neo usage all` lists (default 10). */
  top?: number;
  now?: () => number;
}

export interface UsageTracker {
  /** The loop's budget; undefined when no model has a price (nothing to count in USD). */
  readonly budget: TurnBudget | undefined;
  /** `/neo usage` for one user: today and this month, with their budget. Rejects if the store is down. */
  report(user: UserKey): Promise<string>;
  /** `/neo usage all` (admins): the deployment's totals and the top users, today and this month. */
  totals(): Promise<string>;
  /** `/neo status` usage lines (Markdown bullets). Never rejects. */
  statusLines(): Promise<string>;
  /** `/neo budget <user> <usd>|default`; the reply text. */
  setBudget(user: UserKey, usd: number | undefined): Promise<string>;
  /** Resolves once every count recorded so far is in the store (tests, shutdown). */
  flushed(): Promise<void>;
}

const trackerLog = log.child({ component: "usage-budget" });

export function createUsageTracker(opts: UsageTrackerOptions): UsageTracker {
  const { ledger } = opts;
  const now = opts.now ?? Date.now;
  const top = opts.top ?? 10;
  const counts = createUsageStore(opts.store);
  const limits = createUsdBudget({
    store: opts.store,
    usage: counts,
    userDaily: opts.userDailyUsd,
    deploymentDaily: opts.deploymentDailyUsd,
  });
  const inflight = new Set<Promise<void>>();
  let degraded = false;

  const failed = (err: unknown, op: string) => {
    if (!degraded) {
      trackerLog.warn(
        { err: (err as Error)?.message ?? String(err), op },
        "usage store unreachable: usage is not counted and budgets are NOT enforced until it returns",
      );
    }
    degraded = true;
  };
  const ok = () => {
    if (degraded) trackerLog.info("usage store reachable again: usage counted and budgets enforced");
    degraded = false;
  };

  // Not awaited: the ledger is synchronous. `add` never rejects, and reads wait for adds in flight.
  ledger.onRecord((e) => {
    const p: Promise<void> = counts
      .add({
        user: e.tags.user,
        tokens: e.usage.promptTokens + e.usage.completionTokens,
        promptTokens: e.usage.promptTokens,
        cachedTokens: e.usage.cachedPromptTokens ?? 0,
        costUsd: e.costUsd,
        at: now(),
      })
      .then(ok, (err: unknown) => failed(err, "add"))
      .finally(() => inflight.delete(p));
    inflight.add(p);
  });
  const flushed = async () => {
    await Promise.all([...inflight]);
  };

  const budget: TurnBudget | undefined = ledger.priced
    ? {
        async check(user) {
          // Counts of calls that already finished must be in before reading, or a fast next step slips by.
          await flushed();
          try {
            const verdict = await limits.check(user, now());
            ok();
            return verdict;
          } catch (err) {
            failed(err, "check");
            return { kind: "ok" };
          }
        },
      }
    : undefined;

  const line = (label: string, t: PeriodTotals) => `• ${label}: ${totalsText(t, ledger.priced)}`;
  const periods = (at: number): [Period, Period] => [
    { kind: "day", at },
    { kind: "month", at },
  ];
  const resetsIn = (at: number) => `resets 00:00 UTC, in ${duration(nextUtcMidnight(at) - at)}`;

  return {
    budget,
    async report(user) {
      await flushed();
      const at = now();
      const [day, month] = periods(at);
      const [today, thisMonth, limit] = await Promise.all([
        counts.totals(user, day),
        counts.totals(user, month),
        limits.userLimit(user),
      ]);
      const lines = [line("Today (UTC)", today), line(`This month (${utcMonth(at)})`, thisMonth)];
      if (limit !== undefined && ledger.priced) {
        lines.push(`• Daily budget: ${usd(limit)}, ${pctOf(today.usd, limit)} used today (${resetsIn(at)})`);
      }
      return lines.join("\n");
    },
    async totals() {
      await flushed();
      const at = now();
      const [day, month] = periods(at);
      const [today, thisMonth, usersToday, usersMonth] = await Promise.all([
        counts.totals(DEPLOYMENT, day),
        counts.totals(DEPLOYMENT, month),
        counts.users(day),
        counts.users(month),
      ]);
      const topLines = (title: string, rows: Array<{ user: UserKey } & PeriodTotals>) => {
        if (rows.length === 0) return [];
        const shown = rows.slice(0, top);
        const more = rows.length > shown.length ? ` (top ${shown.length} of ${rows.length})` : "";
        return [
          `• ${title}${more}:`,
          ...shown.map((r) => `    • \`${r.user}\` ${totalsText(r, ledger.priced)}`),
        ];
      };
      return [
        line("Deployment today (UTC)", today),
        line(`Deployment this month (${utcMonth(at)})`, thisMonth),
        ...topLines("Users today", usersToday),
        ...topLines("Users this month", usersMonth),
      ].join("\n");
    },
    async statusLines() {
      const at = now();
      const budgets = [
        limits.userDaily !== undefined ? `${usd(limits.userDaily)} per user per day` : "",
        limits.deploymentDaily !== undefined
          ? `${usd(limits.deploymentDaily)} for the deployment per day`
          : "",
      ].filter(Boolean);
      const head = ledger.priced
        ? `• Budgets: ${budgets.length ? budgets.join(", ") : "none by default"} (${resetsIn(at)})`
        : "• Budgets: off (no NEO_MODEL_PRICES, so no cost)";
      try {
        await flushed();
        const today = await counts.totals(DEPLOYMENT, { kind: "day", at });
        const cache =
          today.promptTokens > 0 && today.cachedTokens === 0
            ? "• Prompt cache: 0 % of input from cache today (the endpoint reported no cached tokens)"
            : "";
        return [`• Usage today (UTC, all instances): ${totalsText(today, ledger.priced)}`, cache, head]
          .filter(Boolean)
          .join("\n");
      } catch (err) {
        return [`• Usage today: unavailable (${(err as Error).message}); budgets not enforced`, head].join(
          "\n",
        );
      }
    },
    async setBudget(user, amount) {
      if (!ledger.priced) {
        return "Budgets are in USD, and no model has a price: set NEO_MODEL_PRICES first.";
      }
      await limits.setUserLimit(user, amount);
      if (amount !== undefined) return `Daily budget of \`${user}\` is now ${usd(amount)}.`;
      const fallback = limits.userDaily;
      return `Daily budget of \`${user}\` is back to the default (${fallback === undefined ? "unlimited" : usd(fallback)}).`;
    },
    flushed,
  };
}
