/**
 * Whether a turn is getting anywhere, judged per model attempt (one batch of tool calls):
 * - rung 2 of the recovery ladder counts, per tool, the attempts in which it returned in-band errors;
 *   a parallel batch is one attempt however many of its calls failed, and the model has seen every
 *   error of an attempt before it makes the next one. More than `maxAdaptAttempts` further attempts
 *   of a failing tool end the turn;
 * - a stall is the same calls returning the same results: a poll whose result changes is progress.
 *   After `noProgressStall` identical runs in a row, the same calls again are not run.
 */
import { createHash } from "node:crypto";
import type { ToolCall } from "../llm/types.js";
import type { ToolResult } from "../tools/types.js";
import type { StopReason } from "./partial.js";

interface Outcome {
  call: ToolCall;
  result: ToolResult;
}

/** Same tool names and arguments, in the same order. */
function callsKey(calls: readonly ToolCall[]): string {
  return JSON.stringify(calls.map((c) => [c.function.name, c.function.arguments]));
}

/** A digest of what the calls returned, in call order. */
function resultsDigest(outcomes: readonly Outcome[]): string {
  const h = createHash("sha256");
  for (const o of outcomes)
    h.update(`${o.result.isError ? "E" : "R"}${o.result.content.length}:${o.result.content}`);
  return h.digest("hex");
}

export interface StallCheck {
  /** Before running a batch: a stop when these calls already returned the same results often enough. */
  before(calls: readonly ToolCall[]): StopReason | null;
  /** After running it: remember what it returned. */
  after(outcomes: readonly Outcome[]): void;
}

export function createStallCheck(noProgressStall: number): StallCheck {
  let lastCalls = "";
  let lastRun = "";
  /** Runs in a row of `lastCalls` that returned the same results. */
  let sameRuns = 0;
  return {
    before(calls) {
      if (callsKey(calls) !== lastCalls || sameRuns < noProgressStall) return null;
      return { kind: "stall", tool: calls[0]!.function.name, repeats: sameRuns + 1 };
    },
    after(outcomes) {
      const calls = callsKey(outcomes.map((o) => o.call));
      const run = `${calls}\n${resultsDigest(outcomes)}`;
      sameRuns = run === lastRun ? sameRuns + 1 : 1;
      lastRun = run;
      lastCalls = calls;
    },
  };
}

export interface AdaptCounter {
  /** Count one attempt; a stop once a tool has failed in more than 1 + maxAdaptAttempts attempts. */
  attempt(outcomes: readonly Outcome[]): StopReason | null;
}

export function createAdaptCounter(maxAdaptAttempts: number): AdaptCounter {
  const failed = new Map<string, { attempts: number; errors: number }>();
  return {
    attempt(outcomes) {
      const errorsNow = new Map<string, number>();
      for (const { call, result } of outcomes) {
        if (result.isError) errorsNow.set(call.function.name, (errorsNow.get(call.function.name) ?? 0) + 1);
      }
      let stop: StopReason | null = null;
      for (const [tool, errors] of errorsNow) {
        const f = failed.get(tool) ?? { attempts: 0, errors: 0 };
        f.attempts++;
        f.errors += errors;
        failed.set(tool, f);
        if (!stop && f.attempts > maxAdaptAttempts) stop = { kind: "adapt_exhausted", tool, ...f };
      }
      return stop;
    },
  };
}
