/**
 * The end of a turn, as operators see it: one `neo_turns_total{status}` increment and one info line
 * (conversation, status, steps, duration, tokens). Called from exactly one place, `Agent.chat`.
 */

import { metrics } from "../../ops/metrics.js";
import type { ConversationKey } from "../keys.js";
import { log } from "../log.js";
import type { TurnStatus } from "./types.js";

const turnLog = log.child({ component: "agent" });

export interface TurnEnd {
  conversation: ConversationKey;
  status: TurnStatus;
  steps: number;
  tokens: number;
  startedAt: number;
}

export function recordTurnEnd(t: TurnEnd): void {
  metrics.turns.inc({ status: t.status });
  turnLog.info(
    {
      conversation: t.conversation,
      status: t.status,
      steps: t.steps,
      durationMs: Date.now() - t.startedAt,
      tokens: t.tokens,
    },
    "turn ended",
  );
}

/** One model call of the loop (a step). */
export function recordStep(): void {
  metrics.steps.inc();
}
