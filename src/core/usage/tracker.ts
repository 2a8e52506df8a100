/**
 * Usage for operators and the per-user daily budget, built once per process:
 * - `summary()` is the `/neo status` text (CommandDeps.system.usage): tokens and cost since start,
 *   in total and for the top users and conversations (from the in-memory ledger), and, with a
 *   budget, each user's count today from the store (all instances);
 * - `gate` goes to `createLlmClient(cfg, ledger, { gate })`: it refuses a user's `turn` calls once
 *   their count today is at or over `dailyTokens`. Every call tagged with a user (turn, compaction,
 *   write-back, plan) adds to that count, through the ledger.
 */
import type { Store } from "../../store/types.js";
import type { TurnGate } from "../llm/types.js";
import type { UsageLedger, UsageTotals } from "../llm/usage-ledger.js";
import { createDailyBudget, type DailyBudget, nextUtcMidnight } from "./daily-budget.js";
import { count, duration, tokens, totalsText } from "./format.js";

export interface UsageTrackerOptions {
  store: Store;
  /** The ledger the LLM client records into. */
  ledger: UsageLedger;
  /** `NEO_USER_DAILY_TOKENS`; undefined = no budget (nothing is counted in the store). */
  dailyTokens?: number | undefined;
  /** How many users and conversations `/neo status` lists (default 5). */
  top?: number;
  now?: () => number;
}

export interface UsageTracker {
  /** The client's gate; undefined when no daily budget is configured. */
  readonly gate: TurnGate | undefined;
  /** `/neo status` usage lines (Markdown bullets). Never rejects. */
  summary(): Promise<string>;
  /** Resolves once every count recorded so far is in the store (tests, shutdown). */
  flushed(): Promise<void>;
}

const byTokens = (a: [string, UsageTotals], b: [string, UsageTotals]) =>
  b[1].promptTokens + b[1].completionTokens - (a[1].promptTokens + a[1].completionTokens);

export function createUsageTracker(opts: UsageTrackerOptions): UsageTracker {
  const { ledger } = opts;
  const now = opts.now ?? Date.now;
  const top = opts.top ?? 5;
  const budget: DailyBudget | undefined =
    opts.dailyTokens === undefined
      ? undefined
      : createDailyBudget({ store: opts.store, limit: opts.dailyTokens, now });

  if (budget) {
    // Not awaited: the ledger is synchronous. `add` never rejects, and `admit` waits for adds in flight.
    ledger.onRecord((e) => {
      if (e.tags.user) void budget.add(e.tags.user, e.usage.promptTokens + e.usage.completionTokens);
    });
  }

  const topLines = (title: string, rows: ReadonlyMap<string, UsageTotals>): string[] => {
    if (rows.size === 0) return [];
    const shown = [...rows].sort(byTokens).slice(0, top);
    const more = rows.size > shown.length ? ` (top ${shown.length} of ${rows.size})` : "";
    return [
      `    • ${title}${more}:`,
      ...shown.map(
        ([key, t]) => `        • \`${key}\` ${totalsText(t, ledger.priced)}, ${count(t.calls, "call")}`,
      ),
    ];
  };

  const budgetLines = async (b: DailyBudget): Promise<string[]> => {
    const at = now();
    const head = `• Daily budget: ${tokens(b.limit)} tokens per user, resets 00:00 UTC (in ${duration(nextUtcMidnight(at) - at)})`;
    try {
      const rows = await b.today();
      if (rows.length === 0) return [`${head}; nobody has used any today`];
      return [
        `${head}; today:`,
        ...rows
          .slice(0, top)
          .map(
            (r) =>
              `    • \`${r.user}\` ${tokens(r.tokens)} tokens${r.tokens >= b.limit ? " (limit reached)" : ""}`,
          ),
      ];
    } catch (err) {
      return [`${head}; today's counts unavailable (${(err as Error).message}), budgets not enforced`];
    }
  };

  return {
    gate: budget ? { admit: (user) => budget.admit(user) } : undefined,
    async summary() {
      const total = ledger.total();
      const lines = [
        `• Usage since start (this instance): ${totalsText(total, ledger.priced)} in ${count(total.calls, "model call")}` +
          (ledger.priced ? "" : " (no NEO_MAIN_PRICE set, so no cost)"),
        ...topLines("Users", ledger.byUser()),
        ...topLines("Conversations", ledger.byConversation()),
        ...(budget ? await budgetLines(budget) : []),
      ];
      return lines.join("\n");
    },
    flushed: async () => {
      await budget?.flushed();
    },
  };
}
