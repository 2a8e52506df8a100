/**
 * Cortex records: what Neo remembers about one user. Every record carries an id, timestamps, the
 * conversation it came from and the place it was learned in (its provenance: who may see it, see
 * `core/place.ts`). Records are validated with zod whenever they are read back.
 */
import { z } from "zod";
import { type ConversationKey, hashTag, type UserKey } from "../../core/keys.js";
import { type Provenance, provenanceSchema } from "../../core/place.js";

const base = {
  id: z.string().min(1),
  /** Epoch ms. */
  createdAt: z.number(),
  updatedAt: z.number(),
  /** The conversation key the record was learned in; null when not from a conversation. */
  source: z.string().nullable(),
  /** Where it was learned; absent on records written before places existed (they count as `dm`). */
  learned: provenanceSchema.optional(),
};

const text = z.string().trim().min(1);
const texts = z.array(text);

export const factRecord = z.object({ ...base, kind: z.literal("fact"), statement: text });
/** A durable truth about the user (name, role, preference): pinned to every conversation. */
export const userFactRecord = z.object({ ...base, kind: z.literal("user_fact"), statement: text });
export const patternRecord = z.object({
  ...base,
  kind: z.literal("pattern"),
  name: text,
  trigger: text,
  preconditions: texts,
  steps: texts,
  gotchas: texts,
  successCriteria: texts,
  /** How many times the pattern was seen (1 for a fresh candidate). */
  coverage: z.number().int().min(1),
  /** Confidence in [0, 1]; a fresh candidate starts low and is nudged up by reinforcement. */
  strength: z.number().min(0).max(1),
});
export const outcomeStatus = z.enum(["success", "failure", "partial"]);
export const outcomeRecord = z.object({
  ...base,
  kind: z.literal("outcome"),
  summary: text,
  status: outcomeStatus,
});
export const goalRecord = z.object({
  ...base,
  kind: z.literal("goal"),
  statement: text,
  status: z.enum(["active", "done", "abandoned"]),
});
/** A hard constraint the user set ("never spend more than 5 USDC"): pinned, never violated. */
export const constraintRecord = z.object({ ...base, kind: z.literal("constraint"), statement: text });

export const cortexRecord = z.discriminatedUnion("kind", [
  factRecord,
  userFactRecord,
  patternRecord,
  outcomeRecord,
  goalRecord,
  constraintRecord,
]);

export type FactRecord = z.infer<typeof factRecord>;
export type UserFactRecord = z.infer<typeof userFactRecord>;
export type PatternRecord = z.infer<typeof patternRecord>;
export type OutcomeStatus = z.infer<typeof outcomeStatus>;
export type OutcomeRecord = z.infer<typeof outcomeRecord>;
export type GoalRecord = z.infer<typeof goalRecord>;
export type ConstraintRecord = z.infer<typeof constraintRecord>;
export type CortexRecord = z.infer<typeof cortexRecord>;
export type RecordKind = CortexRecord["kind"];

/** One completed exchange, kept per user for recall in later conversations. */
export const turnRecord = z.object({
  id: z.string().min(1),
  at: z.number(),
  conversation: z.string(),
  /** What the user said in the turn (all of their messages, joined). */
  user: z.string(),
  /** Neo's final answer. */
  assistant: z.string(),
  /** Where the exchange took place; absent = `dm`. */
  learned: provenanceSchema.optional(),
});
export type TurnRecord = z.infer<typeof turnRecord>;

/** Where a write comes from: the conversation and the place it ran in. */
export interface Origin {
  conversation: ConversationKey;
  learned: Provenance;
}

/** A pattern as extracted or supplied, before it has identity and counters. */
export interface PatternSpec {
  name: string;
  trigger: string;
  preconditions?: readonly string[];
  steps: readonly string[];
  gotchas?: readonly string[];
  successCriteria?: readonly string[];
}

/** Everything held about one user, as exported. */
export interface UserExport {
  user: UserKey;
  exportedAt: number;
  records: CortexRecord[];
  turns: TurnRecord[];
}

/** Store keys of one user's cortex. All of them start with `cortex:{<user>}:` (the user's hash tag). */
export function cortexKeys(user: UserKey) {
  const root = `cortex:${hashTag(user)}:`;
  return {
    root,
    /** Append-only list of record versions; a later version of an id supersedes the earlier. */
    records: `${root}records`,
    /** Append-only list of completed turns. */
    turns: `${root}turns`,
    /** A fresh random token written after every change: the cheap cache-validity check. */
    version: `${root}version`,
    /** Counts rewrites of the lists (one record forgotten): a view of another epoch is read again whole. */
    epoch: `${root}epoch`,
  };
}
