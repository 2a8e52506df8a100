/**
 * What the loop needs from the cortex. `src/memory` implements it; without memory wired the loop
 * uses `NO_MEMORY` and the system block's memory sections are empty.
 */
import type { ConversationKey, UserKey } from "./keys.js";
import type { Message } from "./llm/types.js";
import type { Place } from "./place.js";

/** Rendered memory sections for the system block. Empty strings are omitted. */
export interface MemoryPage {
  /** Identity, inviolable rules, hard constraints, user profile, active goal. */
  pinned: string;
  /** Relevant past conversation turns, deduped against the live transcript. */
  recalled: string;
  /** Page-faulted records (facts, events, preferences, goals) within a token budget. */
  retrieved: string;
  /** Proven procedural patterns whose trigger matches the goal. */
  patterns: string;
  /** True when the store could not be reached; the loop says so in the system block. */
  unavailable?: boolean;
}

export interface FaultRequest {
  /** The speaker. Only this user's records are read. */
  user: UserKey;
  conversation: ConversationKey;
  /** Where the turn runs: only records at least as private as this place are read. */
  place: Place;
  /** User input, plus the latest narration on a mid-turn refault. */
  query: string;
  activeGoal: string;
  /** The live transcript, so recalled turns already present are not repeated. */
  live: readonly Message[];
}

export interface WriteBackJob {
  /** The speaker of the completed turn; only their cortex is written. */
  user: UserKey;
  conversation: ConversationKey;
  /** Where the turn ran: what it teaches is kept as learned there. */
  place: Place;
  transcript: readonly Message[];
}

export interface MemoryPort {
  fault(req: FaultRequest): Promise<MemoryPage>;
  /** Enqueue background consolidation. Never blocks and never throws (drops are counted). */
  writeBack(job: WriteBackJob): void;
}

export const EMPTY_PAGE: MemoryPage = { pinned: "", recalled: "", retrieved: "", patterns: "" };
