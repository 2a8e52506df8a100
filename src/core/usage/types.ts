/**
 * The USD budget as the loop sees it. Before each of its model calls the loop asks `check` for the
 * turn's requester: a `warning` is told once (a Notice, event `budget_warning`), an `exceeded` ends
 * the turn with an honest partial (event `budget_exceeded`).
 */
import type { UserKey } from "../keys.js";

/** Whose budget: the requester's own, or the whole deployment's. */
export type BudgetScope = "user" | "deployment";

export type BudgetVerdict =
  | { kind: "ok" }
  | {
      /** `warning`: at or over 80 % (told once per user, scope and day); `exceeded`: at or over 100 %. */
      kind: "warning" | "exceeded";
      scope: BudgetScope;
      usedUsd: number;
      limitUsd: number;
      /** Epoch ms of the next UTC midnight, when the count starts over. */
      resetsAt: number;
      /** What the user is told, in full (for `exceeded`: why the turn stopped, without a final period). */
      text: string;
    };

export interface TurnBudget {
  /** Never rejects: a store failure admits the user (logged once). */
  check(user: UserKey): Promise<BudgetVerdict>;
}

/** Totals of one scope over one period. */
export interface PeriodTotals {
  usd: number;
  /** Prompt and completion tokens together. */
  tokens: number;
  promptTokens: number;
  /** Of `promptTokens`, read from the provider's prompt cache (billed at the cached price). */
  cachedTokens: number;
  calls: number;
}
