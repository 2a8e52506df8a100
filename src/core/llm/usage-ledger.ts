/**
 * The usage ledger: tokens and cost of every model call, totalled per conversation, per user and
 * per model, in memory, for `/metrics`. Its listeners carry each call to the durable usage counts
 * (`core/usage`), which `/neo usage` and the USD budgets read.
 */
import type { ConversationKey, UserKey } from "../keys.js";
import type { TokenUsage, UsageTags } from "./types.js";

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

export interface UsageTotals {
  calls: number;
  promptTokens: number;
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
  total(): UsageTotals;
  conversation(key: ConversationKey): UsageTotals;
  user(key: UserKey): UsageTotals;
  byModel(): ReadonlyMap<string, UsageTotals>;
  /** Totals by user key (calls tagged with a user). */
  byUser(): ReadonlyMap<string, UsageTotals>;
  /** Totals by conversation key (calls tagged with a conversation). */
  byConversation(): ReadonlyMap<string, UsageTotals>;
  /** True when at least one model has a price, so costs mean something. */
  readonly priced: boolean;
  /** Called after each record (metrics exporters hook here). */
  onRecord(listener: (entry: UsageEntry) => void): void;
}

const zero = (): UsageTotals => ({ calls: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 });

function add(map: Map<string, UsageTotals>, key: string, e: UsageEntry): void {
  const t = map.get(key) ?? zero();
  t.calls += 1;
  t.promptTokens += e.usage.promptTokens;
  t.completionTokens += e.usage.completionTokens;
  t.costUsd += e.costUsd;
  map.set(key, t);
}

export function createUsageLedger(prices: ReadonlyMap<string, ModelPrice> = new Map()): UsageLedger {
  const totals = new Map<string, UsageTotals>();
  const conversations = new Map<string, UsageTotals>();
  const users = new Map<string, UsageTotals>();
  const models = new Map<string, UsageTotals>();
  const listeners: Array<(e: UsageEntry) => void> = [];
  return {
    record(model, tags, usage) {
      const price = prices.get(model);
      const costUsd = price
        ? (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000
        : 0;
      const entry: UsageEntry = { model, tags, usage, costUsd, at: Date.now() };
      add(totals, "all", entry);
      add(models, model, entry);
      if (tags.conversation) add(conversations, tags.conversation, entry);
      if (tags.user) add(users, tags.user, entry);
      for (const l of listeners) l(entry);
      return entry;
    },
    total: () => ({ ...(totals.get("all") ?? zero()) }),
    conversation: (key) => ({ ...(conversations.get(key) ?? zero()) }),
    user: (key) => ({ ...(users.get(key) ?? zero()) }),
    byModel: () => models,
    byUser: () => users,
    byConversation: () => conversations,
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
