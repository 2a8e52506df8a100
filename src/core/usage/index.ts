/** Durable usage counts, the USD budgets, and the text of `/neo usage`, `/neo status` and `/neo budget`. */
export { createUsageTracker, type UsageTracker, type UsageTrackerOptions } from "./tracker.js";
export type { BudgetVerdict, TurnBudget } from "./types.js";
