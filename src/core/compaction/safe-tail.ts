/**
 * Where a window may be cut: never between an assistant tool call and its results, so the kept
 * transcript is always a valid request on its own.
 */
import { messageTokens } from "../budget/budget.js";
import type { Message } from "../llm/types.js";

/** Index of the last user message, or 0. The seed's safeTail keeps `working.slice(safeTailStart)`. */
export function safeTailStart(working: readonly Message[]): number {
  for (let i = working.length - 1; i >= 0; i--) if (working[i]!.role === "user") return i;
  return 0;
}

/**
 * Where to cut for compaction: the earliest clean boundary (a user or assistant message, never a
 * tool result) whose tail fits in `keepTokens`; failing that, the latest clean boundary. Between
 * turns (`turnOver`) the end of the transcript is a clean boundary too, so everything may be
 * summarized. Returns 0 when nothing can be compacted.
 */
export function compactionCut(working: readonly Message[], keepTokens: number, turnOver: boolean): number {
  let tail = 0;
  let best = turnOver && working.length > 0 ? working.length : 0;
  let latest = best;
  for (let i = working.length - 1; i > 0; i--) {
    tail += messageTokens(working[i]!);
    if (working[i]!.role === "tool") continue;
    if (latest === 0) latest = i;
    if (tail <= keepTokens) best = i;
  }
  return best || latest;
}
