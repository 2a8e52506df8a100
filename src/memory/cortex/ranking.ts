/**
 * Reading a user's view: ranking records, patterns and past turns, and assembling the pinned
 * block. Pure functions of the view, the place the reading turn runs in and the clock: nothing
 * learned in a more private place than `here` is ever returned (`visibleIn`).
 */
import type { Message } from "../../core/llm/types.js";
import { type Place, scopeOf, visibleIn } from "../../core/place.js";
import type { ConstraintRecord, CortexRecord, PatternRecord, TurnRecord, UserFactRecord } from "./records.js";
import { estimateTokens, normalizeStatement } from "./text.js";
import type { UserView } from "./user-view.js";

/** Seed default: at most 16 recalled turns. */
export const DEFAULT_RECALL_TURNS = 16;
/** User facts pinned at most (newest first): the profile must stay small in every system block. */
const PROFILE_MAX = 40;
/** Ranked candidates considered for the budget; far more than ever fit in it. */
const FAULT_CANDIDATES = 100;
const DAY_MS = 86_400_000;

export interface ScoredRecord<R extends CortexRecord = CortexRecord> {
  record: R;
  score: number;
}

export interface PinnedBlock {
  constraints: ConstraintRecord[];
  /** User facts, newest first, deduped by normalized statement. */
  profile: UserFactRecord[];
  /** The goal given for this turn, else the newest active goal record. */
  activeGoal: string;
}

export interface RecallOptions {
  /** The live transcript: turns already in it are not recalled again. */
  live?: readonly Message[];
  max?: number;
  tokenBudget?: number;
}

/** In (0.6, 1]: a month-old record weighs about 0.75 of a fresh one. */
export function recency(at: number, now: number): number {
  return 0.6 + 0.4 * Math.exp(-Math.max(0, now - at) / (30 * DAY_MS));
}

/** How a record is shown in a budgeted list; also what its budget cost is measured on. */
export function recordLine(r: CortexRecord): string {
  switch (r.kind) {
    case "fact":
    case "user_fact":
    case "constraint":
      return r.statement;
    case "goal":
      return `goal (${r.status}): ${r.statement}`;
    case "outcome":
      return `outcome (${r.status}): ${r.summary}`;
    case "pattern":
      return `pattern "${r.name}" when ${r.trigger}: ${r.steps.join(" → ")}`;
  }
}

/** Records most relevant to `query` (relevance × recency × strength) that fit `tokenBudget`. */
export function rankRecords(
  view: UserView,
  here: Place,
  query: string,
  tokenBudget: number,
  now: number,
): ScoredRecord[] {
  // Profile and constraints are not in this index; an active goal is pinned, so it is skipped.
  const weight = (r: CortexRecord) =>
    (r.kind === "goal" && r.status === "active") || !visibleIn(r.learned, here)
      ? 0
      : recency(r.updatedAt, now) * (r.kind === "pattern" ? 0.5 + r.strength : 1);
  const out: ScoredRecord[] = [];
  let used = 0;
  for (const hit of view.recordIndex.search(query, FAULT_CANDIDATES, weight)) {
    const cost = estimateTokens(recordLine(hit.payload)) + 2;
    if (used + cost > tokenBudget) continue;
    used += cost;
    out.push({ record: hit.payload, score: hit.score });
  }
  return out;
}

/** Patterns whose name or trigger matches the goal, strongest relevant first. */
export function rankPatterns(
  view: UserView,
  here: Place,
  goal: string,
  limit: number,
  now: number,
): ScoredRecord<PatternRecord>[] {
  return view.patternIndex
    .search(goal, limit, (r) =>
      visibleIn(r.learned, here) ? (0.5 + r.strength) * recency(r.updatedAt, now) : 0,
    )
    .map((h) => ({ record: h.payload, score: h.score }));
}

const newestFirst = <R extends CortexRecord>(xs: Iterable<R>) =>
  [...xs].sort((a, b) => b.updatedAt - a.updatedAt);

/**
 * The stored part of the pinned block, memoized per view revision (it only changes on writes) and
 * per audience of the place (a DM, or a kind of channel in one workspace).
 */
const pinnedCache = new WeakMap<UserView, { revision: number; blocks: Map<string, PinnedBlock> }>();

export function pinnedOf(view: UserView, here: Place, activeGoal?: string): PinnedBlock {
  let cached = pinnedCache.get(view);
  if (cached?.revision !== view.revision) {
    cached = { revision: view.revision, blocks: new Map() };
    pinnedCache.set(view, cached);
  }
  const audience = scopeOf(here);
  let block = cached.blocks.get(audience);
  if (!block) {
    const visible = <R extends CortexRecord>(xs: Iterable<R>) =>
      newestFirst(xs).filter((r) => visibleIn(r.learned, here));
    const seen = new Set<string>();
    const profile: UserFactRecord[] = [];
    for (const f of visible(view.profile.values())) {
      const k = normalizeStatement(f.statement);
      if (seen.has(k)) continue;
      seen.add(k);
      profile.push(f);
      if (profile.length >= PROFILE_MAX) break;
    }
    const goal = visible(view.goals.values()).find((g) => g.status === "active");
    block = {
      constraints: visible(view.constraints.values()),
      profile,
      activeGoal: goal?.statement ?? "",
    };
    cached.blocks.set(audience, block);
  }
  return {
    constraints: [...block.constraints],
    profile: [...block.profile],
    activeGoal: activeGoal?.trim() || block.activeGoal,
  };
}

/**
 * What a turn's recall weight is made of, by position in `view.turns`: when it was, and whether it
 * may be shown in each audience. Kept in flat arrays beside the view (its turns only ever grow; a
 * rewrite makes a new view), so a search over hundreds of turns weighs them without reaching into
 * each turn's record and place objects, scattered over the heap.
 */
const turnWeightCache = new WeakMap<UserView, { at: number[]; visible: Map<string, number[]> }>();

function turnWeights(view: UserView, here: Place): { at: readonly number[]; visible: readonly number[] } {
  let cached = turnWeightCache.get(view);
  if (!cached) {
    cached = { at: [], visible: new Map() };
    turnWeightCache.set(view, cached);
  }
  const { turns } = view;
  for (let i = cached.at.length; i < turns.length; i++) cached.at.push(turns[i]!.at);
  const audience = scopeOf(here);
  let visible = cached.visible.get(audience);
  if (!visible) {
    visible = [];
    cached.visible.set(audience, visible);
  }
  for (let i = visible.length; i < turns.length; i++)
    visible.push(visibleIn(turns[i]!.learned, here) ? 1 : 0);
  return { at: cached.at, visible };
}

/**
 * A live user message's normalized lines, kept per message: the live transcript is the same
 * messages turn after turn, and messages are never changed in place.
 */
const liveLineCache = new WeakMap<Message, string[]>();

function linesOf(m: Message & { role: "user" }): string[] {
  let lines = liveLineCache.get(m);
  if (!lines) {
    lines = m.content.split("\n").map(normalizeStatement);
    liveLineCache.set(m, lines);
  }
  return lines;
}

/** Relevant past turns (up to `max`), oldest first, within the budget, not already live. */
export function recallFrom(
  view: UserView,
  here: Place,
  query: string,
  opts: RecallOptions,
  now: number,
): TurnRecord[] {
  const max = opts.max ?? DEFAULT_RECALL_TURNS;
  const budget = opts.tokenBudget ?? Number.POSITIVE_INFINITY;
  // Exact line matches only: "number 1" must not count as present because "number 19" is.
  const liveLines = new Set((opts.live ?? []).flatMap((m) => (m.role === "user" ? linesOf(m) : [])));
  const alreadyLive = (i: number) => liveLines.size > 0 && view.turnLines[i]!.every((l) => liveLines.has(l));
  const picked: number[] = [];
  let used = 0;
  const { at, visible } = turnWeights(view, here);
  for (const { payload: i } of view.turnIndex.search(query, max * 4, (i) =>
    visible[i] ? recency(at[i]!, now) : 0,
  )) {
    if (picked.length >= max) break;
    if (alreadyLive(i)) continue;
    const turn = view.turns[i]!;
    const cost = estimateTokens(turn.user) + estimateTokens(turn.assistant) + 8;
    if (used + cost > budget) continue;
    used += cost;
    picked.push(i);
  }
  return picked.sort((a, b) => a - b).map((i) => view.turns[i]!);
}
