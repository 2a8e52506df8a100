/**
 * The Pager: the cortex API. Writes append record versions to the user's list and bump the user's
 * version token; reads rank the cached user view (user-view.ts) in process. Every call names the
 * user: there is no way to read or write records without saying whose they are.
 */
import { randomUUID } from "node:crypto";
import type { ConversationKey, UserKey } from "../../core/keys.js";
import type { Store } from "../../store/types.js";
import { candidate, reinforce, samePattern } from "./patterns.js";
import {
  type PinnedBlock,
  pinnedOf,
  type RecallOptions,
  rankPatterns,
  rankRecords,
  recallFrom,
  type ScoredRecord,
} from "./ranking.js";
import {
  type ConstraintRecord,
  type CortexRecord,
  cortexKeys,
  type FactRecord,
  type GoalRecord,
  type OutcomeRecord,
  type OutcomeStatus,
  type PatternRecord,
  type PatternSpec,
  type TurnRecord,
  type UserExport,
  type UserFactRecord,
} from "./records.js";
import { createUserViews, statementKey } from "./user-view.js";

export interface Pager {
  rememberFact(user: UserKey, statement: string, source?: ConversationKey): Promise<FactRecord>;
  /** Deduped by normalized statement: a repeat returns the existing record. */
  rememberUserFact(user: UserKey, statement: string, source?: ConversationKey): Promise<UserFactRecord>;
  /** Same identity (name, else trigger, else steps) → coverage + 1 and strength up; else a new candidate. */
  reinforcePattern(
    user: UserKey,
    spec: PatternSpec,
    source?: ConversationKey,
  ): Promise<{ record: PatternRecord; reinforced: boolean }>;
  recordOutcome(
    user: UserKey,
    summary: string,
    status: OutcomeStatus,
    source?: ConversationKey,
  ): Promise<OutcomeRecord>;
  setGoal(user: UserKey, statement: string, source?: ConversationKey): Promise<GoalRecord>;
  closeGoal(user: UserKey, id: string, status: "done" | "abandoned"): Promise<GoalRecord | undefined>;
  rememberConstraint(user: UserKey, statement: string, source?: ConversationKey): Promise<ConstraintRecord>;
  /** Keep one completed exchange for recall in later conversations. */
  recordTurn(user: UserKey, turn: Omit<TurnRecord, "id" | "at">): Promise<TurnRecord>;
  /** Records most relevant to `query` (relevance × recency × strength) that fit `tokenBudget`. */
  fault(user: UserKey, query: string, tokenBudget: number): Promise<ScoredRecord[]>;
  /** Patterns whose trigger matches the goal, strongest relevant first. */
  faultPatterns(user: UserKey, goal: string, limit?: number): Promise<ScoredRecord<PatternRecord>[]>;
  pinned(user: UserKey, activeGoal?: string): Promise<PinnedBlock>;
  /** Relevant past turns (up to 16), oldest first, not already in the live transcript. */
  recallTurns(user: UserKey, query: string, opts?: RecallOptions): Promise<TurnRecord[]>;
  /** The latest version of every record. */
  records(user: UserKey): Promise<CortexRecord[]>;
  /** Wipe everything held for the user. Resolves with how many records and turns were removed. */
  forgetUser(user: UserKey): Promise<number>;
  exportUser(user: UserKey): Promise<UserExport>;
}

export interface PagerOptions {
  store: Store;
  now?: () => number;
  /** Users whose views are cached in process (least recently used are dropped). */
  maxCachedUsers?: number;
}

export function createPager(opts: PagerOptions): Pager {
  const { store } = opts;
  const now = opts.now ?? Date.now;
  const views = createUserViews(store, opts.maxCachedUsers);
  const writing = new Map<UserKey, Promise<unknown>>();

  /** Writes for one user run one at a time in this process, so read-modify-write stays whole. */
  function serial<T>(user: UserKey, fn: () => Promise<T>): Promise<T> {
    const prev = writing.get(user) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => undefined);
    writing.set(user, settled);
    void settled.then(() => {
      if (writing.get(user) === settled) writing.delete(user);
    });
    return next;
  }

  async function put<R extends CortexRecord>(user: UserKey, record: R): Promise<R> {
    const keys = cortexKeys(user);
    await store.append(keys.records, [record]);
    await store.set(keys.version, randomUUID());
    return record;
  }

  const stamp = (source?: ConversationKey) => {
    const t = now();
    return { id: randomUUID(), createdAt: t, updatedAt: t, source: source ?? null };
  };

  const rememberStatement =
    <K extends "fact" | "user_fact" | "constraint">(kind: K) =>
    (user: UserKey, statement: string, source?: ConversationKey) =>
      serial(user, async () => {
        const view = await views.get(user);
        const existing = view.statements.get(statementKey(kind, statement)) as
          | Extract<CortexRecord, { kind: K }>
          | undefined;
        if (existing) return existing;
        return put(user, { ...stamp(source), kind, statement: statement.trim() } as Extract<
          CortexRecord,
          { kind: K }
        >);
      });

  return {
    rememberFact: rememberStatement("fact"),
    rememberUserFact: rememberStatement("user_fact"),
    rememberConstraint: rememberStatement("constraint"),

    reinforcePattern: (user, spec, source) =>
      serial(user, async () => {
        const view = await views.get(user);
        const existing = [...view.patterns.values()].find((r) => samePattern(r, spec));
        if (existing) return { record: await put(user, reinforce(existing, spec, now())), reinforced: true };
        const record = candidate(spec, stamp(source));
        return { record: await put(user, record), reinforced: false };
      }),

    recordOutcome: (user, summary, status, source) =>
      serial(user, () => put(user, { ...stamp(source), kind: "outcome", summary: summary.trim(), status })),

    setGoal: (user, statement, source) =>
      serial(user, () =>
        put(user, { ...stamp(source), kind: "goal", statement: statement.trim(), status: "active" }),
      ),

    closeGoal: (user, id, status) =>
      serial(user, async () => {
        const goal = (await views.get(user)).records.get(id);
        if (goal?.kind !== "goal") return undefined;
        return put(user, { ...goal, status, updatedAt: now() });
      }),

    recordTurn: (user, turn) =>
      serial(user, async () => {
        const record: TurnRecord = { id: randomUUID(), at: now(), ...turn };
        const keys = cortexKeys(user);
        await store.append(keys.turns, [record]);
        await store.set(keys.version, randomUUID());
        return record;
      }),

    fault: async (user, query, tokenBudget) => rankRecords(await views.get(user), query, tokenBudget, now()),
    faultPatterns: async (user, goal, limit = 3) => rankPatterns(await views.get(user), goal, limit, now()),
    pinned: async (user, activeGoal) => pinnedOf(await views.get(user), activeGoal),
    recallTurns: async (user, query, ro = {}) => recallFrom(await views.get(user), query, ro, now()),

    async records(user) {
      return [...(await views.get(user)).records.values()];
    },

    forgetUser: (user) =>
      serial(user, async () => {
        const view = await views.get(user);
        const held = view.records.size + view.turns.length;
        for (const k of await store.keys(cortexKeys(user).root)) await store.delete(k);
        views.evict(user);
        return held;
      }),

    async exportUser(user) {
      const view = await views.get(user);
      return { user, exportedAt: now(), records: [...view.records.values()], turns: [...view.turns] };
    },
  };
}
