/**
 * A per-user, in-process view of the cortex: records and turns plus their lexical indexes. It is a
 * CACHE of the store, validated on every use with one GET of the user's version token; when the
 * token changed it reads only the new tail of the append-only lists (or rebuilds if the lists were
 * wiped), so several bot instances over one Redis stay correct.
 */
import type { UserKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import { type Provenance, scopeOf } from "../../core/place.js";
import type { Store } from "../../store/types.js";
import { createLexicalIndex, type LexicalIndex } from "./lexical-index.js";
import {
  type ConstraintRecord,
  type CortexRecord,
  cortexKeys,
  cortexRecord,
  type GoalRecord,
  type PatternRecord,
  type TurnRecord,
  turnRecord,
  type UserFactRecord,
} from "./records.js";
import { normalizeStatement } from "./text.js";

export interface UserView {
  /** Latest version of every record, by id. */
  records: Map<string, CortexRecord>;
  /** Facts, outcomes, goals and patterns: what a fault ranks. */
  recordIndex: LexicalIndex<CortexRecord>;
  /** Patterns by name and trigger: what the goal is matched against. */
  patternIndex: LexicalIndex<PatternRecord>;
  turns: TurnRecord[];
  /** Normalized lines of what the user said in each turn (same positions as `turns`). */
  turnLines: string[][];
  /** Bumped whenever anything above changes: derived data may be memoized on it. */
  revision: number;
  /** Turns by what the user said; payload = position in `turns`. */
  turnIndex: LexicalIndex<number>;
  /** Statement records (fact, user_fact, constraint) by `kind|scope|normalized statement`, latest wins. */
  statements: Map<string, CortexRecord>;
  patterns: Map<string, PatternRecord>;
  profile: Map<string, UserFactRecord>;
  constraints: Map<string, ConstraintRecord>;
  goals: Map<string, GoalRecord>;
}

/**
 * Dedupe identity of a statement record: the same words learned for the same audience. The same
 * words from a narrower place stay a separate record, so widening one never widens the other.
 */
export function statementKey(kind: string, statement: string, learned: Provenance | undefined): string {
  return `${kind}|${scopeOf(learned)}|${normalizeStatement(statement)}`;
}

interface Cached extends UserView {
  token: string | undefined;
  epoch: number;
  recordsLen: number;
  turnsLen: number;
  firstRecordId: string | undefined;
  firstTurnId: string | undefined;
}

const viewLog = log.child({ component: "cortex" });

/** Text a record is found by. */
export function searchableText(r: CortexRecord): string {
  switch (r.kind) {
    case "pattern":
      return [r.name, r.trigger, ...r.preconditions, ...r.steps, ...r.gotchas, ...r.successCriteria].join(
        " ",
      );
    case "outcome":
      return r.summary;
    default:
      return r.statement;
  }
}

/** The most a ranking weight can be for `r` (recency ≤ 1 times its strength factor). */
export function weightBound(r: CortexRecord): number {
  if (r.kind === "pattern") return 0.5 + r.strength;
  if (r.kind === "goal" && r.status === "active") return 0;
  return 1;
}

/** File a record version under every lookup it belongs to. */
function index(view: UserView, r: CortexRecord): void {
  switch (r.kind) {
    case "user_fact":
      view.statements.set(statementKey(r.kind, r.statement, r.learned), r);
      view.profile.set(r.id, r);
      return;
    case "constraint":
      view.statements.set(statementKey(r.kind, r.statement, r.learned), r);
      view.constraints.set(r.id, r);
      return;
    case "fact":
      view.statements.set(statementKey(r.kind, r.statement, r.learned), r);
      break;
    case "goal":
      view.goals.set(r.id, r);
      break;
    case "pattern":
      view.patterns.set(r.id, r);
      view.patternIndex.upsert(r.id, `${r.name} ${r.trigger}`, r, weightBound(r));
      break;
    case "outcome":
      break;
  }
  view.recordIndex.upsert(r.id, searchableText(r), r, weightBound(r));
}

export interface UserViews {
  /** The user's current view (validated against the store's version token). */
  get(user: UserKey): Promise<UserView>;
  /**
   * Read the user's view now, ahead of a turn (`warm`): the turn's page reads (`recent`) use that
   * read if it is at most `WARM_MS` old, so the check costs the turn no round trip of its own.
   */
  warm(user: UserKey): void;
  /** The view for a page read: a warm read at most `WARM_MS` old, else `get`. */
  recent(user: UserKey): Promise<UserView>;
  /** This process wrote to the user's lists: a warm read from before no longer stands. */
  wrote(user: UserKey): void;
  /** Drop a user's cached view (after forget). */
  evict(user: UserKey): void;
}

/**
 * How old a warm read may be and still serve a turn's page: it is read beside the conversation's
 * lease, a round trip or two before the turn asks (as the conversation's own state, FRESH_READ_MS).
 */
export const WARM_MS = 100;

export function createUserViews(store: Store, maxUsers = 500): UserViews {
  const cache = new Map<UserKey, Cached>();
  // Concurrent reads of one user (pinned, fault, patterns, recall of one page) share one refresh.
  const inflight = new Map<UserKey, Promise<UserView>>();

  const empty = (token: string | undefined, epoch: number): Cached => ({
    token,
    epoch,
    records: new Map(),
    recordIndex: createLexicalIndex(),
    patternIndex: createLexicalIndex(),
    turns: [],
    turnLines: [],
    revision: 0,
    turnIndex: createLexicalIndex(),
    statements: new Map(),
    patterns: new Map(),
    profile: new Map(),
    constraints: new Map(),
    goals: new Map(),
    recordsLen: 0,
    turnsLen: 0,
    firstRecordId: undefined,
    firstTurnId: undefined,
  });

  const applyRecords = (view: Cached, raw: unknown[]) => {
    for (const item of raw) {
      const parsed = cortexRecord.safeParse(item);
      if (!parsed.success) {
        viewLog.warn({ issue: parsed.error.issues[0]?.message }, "skipping an invalid cortex record");
        continue;
      }
      const r = parsed.data;
      view.firstRecordId ??= r.id;
      // A version learned for another audience (widened, narrowed) no longer answers to the old one.
      const prev = view.records.get(r.id);
      if (prev && "statement" in prev && prev.kind !== "goal") {
        const was = statementKey(prev.kind, prev.statement, prev.learned);
        if (view.statements.get(was)?.id === r.id) view.statements.delete(was);
      }
      view.records.set(r.id, r);
      index(view, r);
    }
  };

  const applyTurns = (view: Cached, raw: unknown[]) => {
    for (const item of raw) {
      const parsed = turnRecord.safeParse(item);
      if (!parsed.success) {
        viewLog.warn({ issue: parsed.error.issues[0]?.message }, "skipping an invalid turn record");
        continue;
      }
      const t = parsed.data;
      view.firstTurnId ??= t.id;
      view.turnIndex.upsert(t.id, t.user, view.turns.length);
      view.turns.push(t);
      view.turnLines.push(t.user.split("\n").map(normalizeStatement));
    }
  };

  async function refresh(user: UserKey): Promise<UserView> {
    const keys = cortexKeys(user);
    const cached = cache.get(user);
    // One round trip: the version token, the head of each list (still the one cached: not wiped and
    // refilled) and everything past what the cache holds (nothing, when the token is unchanged).
    // Lists are append-only and the token is set after an append, so items read with a token are
    // never fewer than it stands for; an item read early is read again at most, never missed.
    const [tokenRead, epochRead, recordsHeadRead, turnsHeadRead, newRecords, newTurns] = await store.batch([
      { op: "get", key: keys.version },
      { op: "get", key: keys.epoch },
      { op: "range", key: keys.records, start: 0, stop: 0 },
      { op: "range", key: keys.turns, start: 0, stop: 0 },
      { op: "range", key: keys.records, start: cached?.recordsLen ?? 0, stop: -1 },
      { op: "range", key: keys.turns, start: cached?.turnsLen ?? 0, stop: -1 },
    ]);
    const token = tokenRead as string | undefined;
    const epoch = (epochRead as number | undefined) ?? 0;
    const recordsHead = recordsHeadRead as Array<{ id?: unknown }>;
    const turnsHead = turnsHeadRead as Array<{ id?: unknown }>;
    if (
      cached &&
      cached.token === token &&
      cached.epoch === epoch &&
      newRecords.length === 0 &&
      newTurns.length === 0
    ) {
      cache.delete(user);
      cache.set(user, cached);
      return cached;
    }
    // Nothing cached: what was read from the start is the whole of both lists.
    // A list rewritten since (another epoch: a record forgotten) is read again whole.
    const intact =
      cached === undefined ||
      (cached.epoch === epoch &&
        (cached.firstRecordId === undefined || recordsHead[0]?.id === cached.firstRecordId) &&
        (cached.firstTurnId === undefined || turnsHead[0]?.id === cached.firstTurnId));
    let view: Cached;
    if (intact) {
      view = cached ?? empty(token, epoch);
      applyRecords(view, newRecords);
      applyTurns(view, newTurns);
      view.recordsLen += newRecords.length;
      view.turnsLen += newTurns.length;
    } else {
      // Wiped (or shorter than cached): read both lists whole.
      view = empty(token, epoch);
      const [records, turns] = await Promise.all([
        store.range<unknown>(keys.records, 0, -1),
        store.range<unknown>(keys.turns, 0, -1),
      ]);
      applyRecords(view, records);
      applyTurns(view, turns);
      view.recordsLen = records.length;
      view.turnsLen = turns.length;
    }
    view.token = token;
    view.epoch = epoch;
    view.revision++;
    cache.delete(user);
    cache.set(user, view);
    if (cache.size > maxUsers) cache.delete(cache.keys().next().value!);
    return view;
  }

  const get = (user: UserKey): Promise<UserView> => {
    let p = inflight.get(user);
    if (!p) {
      p = refresh(user).finally(() => inflight.delete(user));
      inflight.set(user, p);
    }
    return p;
  };
  /** Warm reads by user, oldest first (bounded like the cache). */
  const warmed = new Map<UserKey, { at: number; view: Promise<UserView> }>();

  return {
    get,
    warm(user) {
      const view = get(user);
      // Used by the turn's reads, which see its failure; unused, it must not count as unhandled.
      view.catch(() => undefined);
      warmed.delete(user);
      warmed.set(user, { at: Date.now(), view });
      if (warmed.size > maxUsers) warmed.delete(warmed.keys().next().value!);
    },
    recent(user) {
      const w = warmed.get(user);
      if (w && Date.now() - w.at <= WARM_MS) return w.view;
      warmed.delete(user);
      return get(user);
    },
    wrote(user) {
      warmed.delete(user);
    },
    evict(user) {
      cache.delete(user);
      warmed.delete(user);
    },
  };
}
