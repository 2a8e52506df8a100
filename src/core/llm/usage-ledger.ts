/**
 * The usage ledger: prices every model call and returns the entry (the client counts it in
 * `/metrics`, by model) after handing it to its listeners, which carry it to the durable usage
 * counts (`core/usage`, per user and for the deployment) that `/neo usage` and the USD budgets read.
 * In memory it keeps the process's running total only: totals per user or per conversation would
 * grow with every one the process ever saw, and the durable counts already answer per user.
 */
import type { TokenUsage, UsageTags } from "./types.js";

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Input tokens read from the provider's prompt cache; unset = billed as `input`. */
  cached?: number | undefined;
}

/** What one call cost in USD: uncached input, cached input and output, each at its own rate. */
export function callCostUsd(usage: TokenUsage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  const fresh = usage.promptTokens - cached;
  return (
    (fresh * price.input + cached * (price.cached ?? price.input) + usage.completionTokens * price.output) /
    1_000_000
  );
}

export interface UsageTotals {
  calls: number;
  promptTokens: number;
  /** Of `promptTokens`, read from the provider's prompt cache. */
  cachedPromptTokens: number;
  completionTokens: number;
  /** 0 when no price is configured for the model. */
  costUsd: number;
}

export interface UsageEntry {
  model: string;
  tags: UsageTags;
  usage: TokenUsage;
  costUsd: number;
  at: number;
}

export interface UsageLedger {
  record(model: string, tags: UsageTags, usage: TokenUsage): UsageEntry;
  /** This process's calls since it started. */
  total(): UsageTotals;
  /** True when at least one model has a price, so costs mean something. */
  readonly priced: boolean;
  /** Called after each record (metrics exporters hook here). */
  onRecord(listener: (entry: UsageEntry) => void): void;
}

export function createUsageLedger(prices: ReadonlyMap<string, ModelPrice> = new Map()): UsageLedger {
  const totals: UsageTotals = {
    calls: 0,
    promptTokens: 0,
    cachedPromptTokens: 0,
    completionTokens: 0,
    costUsd: 0,
  };
  const listeners: Array<(e: UsageEntry) => void> = [];
  return {
    record(model, tags, usage) {
      const price = prices.get(model);
      const costUsd = price ? callCostUsd(usage, price) : 0;
      const entry: UsageEntry = { model, tags, usage, costUsd, at: Date.now() };
      totals.calls += 1;
      totals.promptTokens += usage.promptTokens;
      totals.cachedPromptTokens += usage.cachedPromptTokens ?? 0;
      totals.completionTokens += usage.completionTokens;
      totals.costUsd += costUsd;
      for (const l of listeners) l(entry);
      return entry;
    },
    total: () => ({ ...totals }),
    priced: prices.size > 0,
    onRecord: (l) => {
      listeners.push(l);
    },
  };
}

/** Prices by model name, as configured in `NEO_MODEL_PRICES`. */
export function pricesFromConfig(cfg: {
  NEO_MODEL_PRICES?: Readonly<Record<string, ModelPrice>> | undefined;
}): Map<string, ModelPrice> {
  return new Map(Object.entries(cfg.NEO_MODEL_PRICES ?? {}));
}
