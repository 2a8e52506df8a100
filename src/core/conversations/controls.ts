/**
 * Controls: jobs a person asks of a conversation (reset, compact) that must run while holding its
 * lease, between turns. Here: what each one does to the live agent, and how waiting ones fail.
 */
import { parseConversationKey } from "../keys.js";
import type { Place } from "../place.js";
import type { LogEntry } from "./log-entry.js";
import { resetSummary } from "./replay.js";
import type { Control, Thread } from "./thread-state.js";
import { turnContext } from "./turn-context.js";

/** Another instance holds the conversation for longer than a control (reset, compact) may wait. */
export class ConversationBusyError extends Error {
  readonly code = "CONVERSATION_BUSY";
}

export const failControls = (t: Thread, err: unknown): void => {
  for (const c of t.controls.splice(0)) c.done(err);
};

export const resetWindow: Control["run"] = async (live, e, t) => {
  // A trim that drops the whole window: the next request starts a new, announced window.
  const { working, summary } = live.agent.state();
  const entry: LogEntry = {
    type: "trim",
    drop: working.length,
    summary: resetSummary(summary),
    at: Date.now(),
  };
  live.logLength = await e.journal.appendLog(t.key, [entry], live.logLength);
  live.agent = e.options.newAgent({ working: [], summary: entry.summary });
};

export const compactWindow: Control["run"] = async (live, e, t) => {
  const signal = new AbortController().signal;
  // Compaction reads no memory; the narrowest place is given all the same.
  const place: Place = { kind: "public", workspace: parseConversationKey(t.key).workspace };
  await live.agent.compact("manual", turnContext(t, live, e, e.options.io(t.key), true, place, signal));
};
