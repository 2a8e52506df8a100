/**
 * The context a turn (or a control's compaction) works in: its events go to the conversation's log,
 * in order, each append reading the inbox in its own command (messages that came meanwhile).
 */
import type { AgentEvent, TurnContext } from "../agent/types.js";
import type { Place } from "../place.js";
import type { LogEntry } from "./log-entry.js";
import { fetchInbox } from "./restore.js";
import type { Live, Thread, ThreadEnv } from "./thread-state.js";
import type { ConversationIO } from "./types.js";

/** A context for work on the conversation whose events go to the log. */
export function turnContext(
  t: Thread,
  live: Live,
  env: ThreadEnv,
  io: ConversationIO,
  shared: boolean,
  place: Place,
  signal: AbortSignal,
  before: () => LogEntry[] = () => [],
): TurnContext {
  /** The newest log write still in flight. */
  let writing: Promise<void> | null = null;
  return {
    conversation: t.key,
    shared,
    place,
    reporter: io.reporter,
    approvals: io.approvals,
    ...(io.forms ? { forms: io.forms } : {}),
    ...(io.files ? { files: io.files } : {}),
    signal,
    onEvent: (event: AgentEvent) => {
      // In order, one at a time: each append names the log length the one before it left. An event
      // sent while another is in flight (the opening message is written while the model is asked)
      // waits for it, and fails with it: the log never holds an event whose predecessor it lost.
      const previous = writing;
      const write = (async () => {
        if (previous) await previous;
        // The inbox is read in the append's own command (after it): messages that came meanwhile.
        const entries = [...before(), event];
        const snap = await env.journal.appendAndLook(t.key, entries, live.logLength, live.fetched);
        live.logLength = snap.logLength;
        await fetchInbox(t, live, env.journal, snap);
      })();
      writing = write;
      const settle = () => {
        if (writing === write) writing = null;
      };
      write.then(settle, settle);
      return write;
    },
  };
}
