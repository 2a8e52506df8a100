/**
 * The Pager: the cortex API. Writes append record versions to the user's list and bump the user's
 * version token; reads rank the cached user view (user-view.ts) in process. Every call names the
 * user, and every read names the place it is for: there is no way to read records without saying
 * whose they are and where they would be shown. Records merge (dedupe, reinforcement) only within
 * one audience (`scopeOf`).
 */
import { randomUUID } from "node:crypto";
import type { UserKey } from "../../core/keys.js";
import { type Place, scopeOf } from "../../core/place.js";
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
  type Origin,
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
  /** Read the user's view ahead of their turn; the turn's page reads use it (`UserViews.warm`). */
  warm(user: UserKey): void;
  /** Without an origin a record has no provenance, and counts as learned in a DM. */
  rememberFact(user: UserKey, statement: string, origin?: Origin): Promise<FactRecord>;
  /** Deduped by normalized statement within one audience: a repeat returns the existing record. */
  rememberUserFact(user: UserKey, statement: string, origin?: Origin): Promise<UserFactRecord>;
  /**
   * Same identity (name, else trigger, else steps) for the same audience → coverage + 1 and
   * strength up; else a new candidate.
   */
  reinforcePattern(
    user: UserKey,
    spec: PatternSpec,
    origin?: Origin,
  ): Promise<{ record: PatternRecord; reinforced: boolean }>;
  recordOutcome(
    user: UserKey,
    summary: string,
    status: OutcomeStatus,
    origin?: Origin,
  ): Promise<OutcomeRecord>;
  setGoal(user: UserKey, statement: string, origin?: Origin): Promise<GoalRecord>;
  closeGoal(user: UserKey, id: string, status: "done" | "abandoned"): Promise<GoalRecord | undefined>;
  rememberConstraint(user: UserKey, statement: string, origin?: Origin): Promise<ConstraintRecord>;
  /**
   * The user asked for it: record `id` is shown everywhere from now on (`everywhere` true), or again
   * only where it was learned (false). Undefined when the user has no such record.
   */
  setEverywhere(user: UserKey, id: string, everywhere: boolean): Promise<CortexRecord | undefined>;
  /**
   * The user asked for it: record `id` is gone from the store (every version), and so are the
   * exchanges of the conversation it was learned in up to when it was learned (they hold the words
   * it came from, and would be recalled). False when the user has no such record.
   */
  forgetRecord(user: UserKey, id: string): Promise<boolean>;
  /** Keep one completed exchange for recall in later conversations. */
  recordTurn(user: UserKey, turn: Omit<TurnRecord, "id" | "at">): Promise<TurnRecord>;
  /** Records visible `here` most relevant to `query` (relevance × recency × strength) that fit `tokenBudget`. */
  fault(user: UserKey, here: Place, query: string, tokenBudget: number): Promise<ScoredRecord[]>;
  /** Patterns visible `here` whose trigger matches the goal, strongest relevant first. */
  faultPatterns(
    user: UserKey,
    here: Place,
    goal: string,
    limit?: number,
  ): Promise<ScoredRecord<PatternRecord>[]>;
  /** Constraints, profile and open goal visible `here`. */
  pinned(user: UserKey, here: Place, activeGoal?: string): Promise<PinnedBlock>;
  /** Relevant past turns visible `here` (up to 16), oldest first, not already in the live transcript. */
  recallTurns(user: UserKey, here: Place, query: string, opts?: RecallOptions): Promise<TurnRecord[]>;
  /** The latest version of every record, wherever learned (for the user's own `/neo memory`, export). */
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
  /**
   * `NEO_MEMORY_RETENTION_DAYS`: unset = kept until forgotten. Set: every write gives the user's
   * cortex keys this TTL (a person nothing was learned from for this long loses them all), and once
   * a day a user's records not learned, reinforced or edited (`updatedAt`) and turns older than it
   * are dropped at their next write.
   */
  retentionMs?: number;
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

  const retentionMs = opts.retentionMs;
  const prunedOn = new Map<UserKey, number>();

  /** Append to one of the user's lists and mark the change; with a retention, refresh its TTL. */
  async function write<T>(user: UserKey, list: "records" | "turns", items: T[]): Promise<void> {
    const keys = cortexKeys(user);
    views.wrote(user);
    // The version token is put in the append's own atomic step: never a list ahead of its token.
    if (retentionMs === undefined) {
      await store.append(keys[list], items, undefined, { key: keys.version, value: randomUUID() });
      return;
    }
    await prune(user);
    const all = [keys.records, keys.turns, keys.epoch];
    await store.append(
      keys[list],
      items,
      { keys: all, ttlMs: retentionMs },
      { key: keys.version, value: randomUUID(), ttlMs: retentionMs },
    );
  }

  /** Once a day per user (in this process): drop records and turns past the retention. */
  async function prune(user: UserKey): Promise<void> {
    if (retentionMs === undefined) return;
    const day = Math.floor(now() / 86_400_000);
    if (prunedOn.get(user) === day) return;
    prunedOn.delete(user);
    prunedOn.set(user, day);
    if (prunedOn.size > 10_000) prunedOn.delete(prunedOn.keys().next().value as UserKey);
    const horizon = now() - retentionMs;
    const view = await views.get(user);
    const stale = new Set([...view.records.values()].filter((r) => r.updatedAt < horizon).map((r) => r.id));
    if (stale.size === 0 && !view.turns.some((t) => t.at < horizon)) return;
    const keys = cortexKeys(user);
    const [records, turns] = await Promise.all([
      store.range<{ id?: unknown }>(keys.records, 0, -1),
      store.range<{ at?: unknown }>(keys.turns, 0, -1),
    ]);
    await rewrite(keys.records, records, (r) => typeof r.id !== "string" || !stale.has(r.id));
    await rewrite(keys.turns, turns, (t) => typeof t.at !== "number" || t.at >= horizon);
    await store.incr(keys.epoch);
    views.evict(user);
  }

  async function put<R extends CortexRecord>(user: UserKey, record: R): Promise<R> {
    await write(user, "records", [record]);
    return record;
  }

  /** Replace list `key` with the items of `items` that `keep`, when any is dropped. */
  async function rewrite<T>(key: string, items: T[], keep: (item: T) => boolean): Promise<void> {
    const kept = items.filter(keep);
    if (kept.length === items.length) return;
    await store.delete(key);
    if (kept.length) await store.append(key, kept);
  }

  const stamp = (origin?: Origin) => {
    const t = now();
    return {
      id: randomUUID(),
      createdAt: t,
      updatedAt: t,
      source: origin?.conversation ?? null,
      ...(origin ? { learned: origin.learned } : {}),
    };
  };

  const rememberStatement =
    <K extends "fact" | "user_fact" | "constraint">(kind: K) =>
    (user: UserKey, statement: string, origin?: Origin) =>
      serial(user, async () => {
        const view = await views.get(user);
        const existing = view.statements.get(statementKey(kind, statement, origin?.learned)) as
          | Extract<CortexRecord, { kind: K }>
          | undefined;
        if (existing) return existing;
        return put(user, { ...stamp(origin), kind, statement: statement.trim() } as Extract<
          CortexRecord,
          { kind: K }
        >);
      });

  return {
    rememberFact: rememberStatement("fact"),
    rememberUserFact: rememberStatement("user_fact"),
    rememberConstraint: rememberStatement("constraint"),

    reinforcePattern: (user, spec, origin) =>
      serial(user, async () => {
        const view = await views.get(user);
        const audience = scopeOf(origin?.learned);
        const existing = [...view.patterns.values()].find(
          (r) => scopeOf(r.learned) === audience && samePattern(r, spec),
        );
        if (existing) return { record: await put(user, reinforce(existing, spec, now())), reinforced: true };
        const record = candidate(spec, stamp(origin));
        return { record: await put(user, record), reinforced: false };
      }),

    recordOutcome: (user, summary, status, origin) =>
      serial(user, () => put(user, { ...stamp(origin), kind: "outcome", summary: summary.trim(), status })),

    setGoal: (user, statement, origin) =>
      serial(user, () =>
        put(user, { ...stamp(origin), kind: "goal", statement: statement.trim(), status: "active" }),
      ),

    setEverywhere: (user, id, everywhere) =>
      serial(user, async () => {
        const record = (await views.get(user)).records.get(id);
        if (!record) return undefined;
        if (Boolean(record.learned?.everywhere) === everywhere) return record;
        // A record without provenance was learned in a DM; its workspace is no longer known.
        const { everywhere: _was, ...where } = record.learned ?? {
          kind: "dm" as const,
          workspace: "unknown",
        };
        const learned = everywhere ? { ...where, everywhere: true } : where;
        return put(user, { ...record, learned, updatedAt: now() });
      }),

    forgetRecord: (user, id) =>
      serial(user, async () => {
        const record = (await views.get(user)).records.get(id);
        if (!record) return false;
        const keys = cortexKeys(user);
        const [records, turns] = await Promise.all([
          store.range<{ id?: unknown }>(keys.records, 0, -1),
          store.range<{ conversation?: unknown; at?: unknown }>(keys.turns, 0, -1),
        ]);
        const fromIt = (t: { conversation?: unknown; at?: unknown }) =>
          record.source !== null &&
          t.conversation === record.source &&
          typeof t.at === "number" &&
          t.at <= record.createdAt;
        // The lists are rewritten without it. Another instance appending to them in this instant
        // loses that append (the store has no list rewrite in one step); a record is re-learned.
        await rewrite(keys.records, records, (r) => r.id !== id);
        await rewrite(keys.turns, turns, (t) => !fromIt(t));
        // Last, so a view read while the lists were rewritten is read again whole (user-view.ts).
        await store.incr(keys.epoch);
        await store.set(keys.version, randomUUID());
        views.evict(user);
        return true;
      }),

    closeGoal: (user, id, status) =>
      serial(user, async () => {
        const goal = (await views.get(user)).records.get(id);
        if (goal?.kind !== "goal") return undefined;
        return put(user, { ...goal, status, updatedAt: now() });
      }),

    recordTurn: (user, turn) =>
      serial(user, async () => {
        const record: TurnRecord = { id: randomUUID(), at: now(), ...turn };
        await write(user, "turns", [record]);
        return record;
      }),

    warm: (user) => views.warm(user),
    fault: async (user, here, query, tokenBudget) =>
      rankRecords(await views.recent(user), here, query, tokenBudget, now()),
    faultPatterns: async (user, here, goal, limit = 3) =>
      rankPatterns(await views.recent(user), here, goal, limit, now()),
    pinned: async (user, here, activeGoal) => pinnedOf(await views.recent(user), here, activeGoal),
    recallTurns: async (user, here, query, ro = {}) =>
      recallFrom(await views.recent(user), here, query, ro, now()),

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
