/**
 * One conversation's durable event log: the agent's own events (message / compaction / reset) plus
 * the bookkeeping entries this layer needs to know, after a crash, which inbound messages the
 * transcript already holds and whether the last turn finished.
 */
import type { AgentEvent, TurnStatus } from "../agent/types.js";
import type { Message } from "../llm/types.js";

export type BookkeepingEntry =
  /**
   * A turn opened with inbox entry `from` (the next untaken one). `trace`: its span's W3C
   * `traceparent` when traces are exported, so an instance that resumes it continues that trace.
   */
  | { type: "turn-start"; from: number; id: string; at: number; trace?: string }
  /** Inbox entries `from..from+count-1` were drained into the running turn. */
  | { type: "taken"; from: number; count: number; ids: string[]; at: number }
  /** The turn finished (any status other than an interruption by shutdown or a lost lease). */
  | { type: "turn-end"; status: TurnStatus; at: number }
  /**
   * On a rebuild (or a reset, which drops all; or a restart after the retention horizon, which
   * drops nothing as nothing is left), the first `drop` messages of the window were dropped to keep the last recalled
   * turns; `summary` (with a new compaction marker, as the window no longer extends the last request)
   * replaces the window's summary.
   */
  | { type: "trim"; drop: number; summary: string; at: number }
  /**
   * The store lost the log (Redis restarted empty, a key evicted): it restarts with the window this
   * instance held, so the next request still extends the last one. Inbox indices start over with it.
   */
  | { type: "reseed"; working: Message[]; summary: string | null; at: number };

export type LogEntry = AgentEvent | BookkeepingEntry;

export function isAgentEvent(entry: LogEntry): entry is AgentEvent {
  return entry.type === "message" || entry.type === "compaction" || entry.type === "reset";
}
