/**
 * Pure functions that turn a conversation's log back into the transcript the model saw last, and
 * read the bookkeeping (what was taken from the inbox, whether a turn was left open) from it.
 */
import { isShownAnswer } from "../agent/notes.js";
import type { AgentState } from "../agent/types.js";
import { compactionMarker, compactionNumber } from "../compaction/marker.js";
import type { AssistantMessage, Message, ToolMessage } from "../llm/types.js";
import type { LogEntry } from "./log-entry.js";

/** What a tool call that never returned (the process died or the turn was cut) reports on resume. */
export const INTERRUPTED_TOOL_RESULT =
  "Error: this tool call was interrupted (Neo restarted before it returned), so its outcome is unknown. " +
  "Check the current state before retrying anything that has side effects.";

/**
 * Rebuild the working transcript and summary: the messages after the last compaction marker
 * (the marker's `kept` plus later messages), with the marker's summary. A `reset` starts over; a
 * `trim` drops the oldest messages. Tool calls with no result get a synthetic error result right
 * after their call's other results, so the transcript is always well-paired.
 */
export function replay(entries: readonly LogEntry[]): AgentState {
  const { working, summary } = loggedWindow(entries);
  return { working: withSyntheticResults(working), summary };
}

/** The window exactly as logged, before synthetic results. */
function loggedWindow(entries: readonly LogEntry[]): AgentState {
  let working: Message[] = [];
  let summary: string | null = null;
  for (const e of entries) {
    switch (e.type) {
      case "message":
        working.push(e.message);
        break;
      case "compaction":
        working = [...e.kept];
        summary = e.summary;
        break;
      case "reset":
        working = [];
        summary = null;
        break;
      case "trim":
        working = working.slice(e.drop);
        summary = e.summary;
        break;
      case "reseed":
        working = [...e.working];
        summary = e.summary;
        break;
      default:
        break;
    }
  }
  return { working, summary };
}

/**
 * The synthetic results `replay` adds for calls left open at the end of the logged window (the
 * usual crash shape), in call order. Persisting them makes the log say what the model will see.
 */
export function tailOrphans(entries: readonly LogEntry[]): ToolMessage[] {
  const { working } = loggedWindow(entries);
  let i = working.length - 1;
  const answered = new Set<string>();
  while (i >= 0 && working[i]!.role === "tool") {
    answered.add((working[i] as ToolMessage).tool_call_id);
    i--;
  }
  const last = working[i];
  if (last?.role !== "assistant" || !last.tool_calls) return [];
  return last.tool_calls
    .filter((c) => !answered.has(c.id))
    .map((c) => ({ role: "tool", tool_call_id: c.id, content: INTERRUPTED_TOOL_RESULT }));
}

/**
 * The model's reply to the last input of a resumed turn, when its transcript ends with that input
 * (the process died, or the store went away, while the model answered): an empty assistant message,
 * all that is known of it. The resume note then follows a reply, as the loop's nudges do, instead of
 * being merged on the wire into that input: the resumed request extends the one the model may have
 * answered.
 */
export function lostReply(working: readonly Message[]): AssistantMessage[] {
  return working.at(-1)?.role === "user" ? [{ role: "assistant", content: "" }] : [];
}

function withSyntheticResults(working: Message[]): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < working.length; i++) {
    const m = working[i]!;
    out.push(m);
    if (m.role !== "assistant" || !m.tool_calls?.length) continue;
    const answered = new Set<string>();
    let j = i + 1;
    while (j < working.length && working[j]!.role === "tool") {
      const t = working[j] as ToolMessage;
      answered.add(t.tool_call_id);
      out.push(t);
      j++;
    }
    for (const c of m.tool_calls) {
      if (!answered.has(c.id))
        out.push({ role: "tool", tool_call_id: c.id, content: INTERRUPTED_TOOL_RESULT });
    }
    i = j - 1;
  }
  return out;
}

/**
 * How many leading messages to drop so the window holds only the last `turns` user turns (a turn
 * starts at a user message). Cuts only at a user message, so no tool result loses its call.
 */
export function recallDrop(working: readonly Message[], turns: number): number {
  const starts: number[] = [];
  working.forEach((m, i) => {
    if (m.role === "user") starts.push(i);
  });
  if (starts.length <= turns) return 0;
  return starts[starts.length - turns]!;
}

/**
 * The summary after a recall trim: the next compaction marker, then the previous summary's body (or
 * a line saying earlier turns were dropped).
 */
export function trimmedSummary(previous: string | null, turns: number): string {
  const marker = compactionMarker(compactionNumber(previous) + 1, "recall");
  const body = previous?.replace(/^\[compaction \d+: [a-z]+\]\n?/, "").trim();
  return `${marker}\n${body || `Earlier turns of this conversation were dropped on resume; the last ${turns} are kept.`}`;
}

/**
 * The summary a reset leaves: only the next compaction marker and a line saying so, because the
 * next request no longer extends the last one and must say it starts a new window.
 */
export function resetSummary(previous: string | null): string {
  return `${compactionMarker(compactionNumber(previous) + 1, "reset")}\nThe conversation was reset; nothing said before it carries over.`;
}

/**
 * The summary a conversation starts over with after its retention horizon deleted it. Its marker is
 * numbered by the clock (ms): the old log is gone with its number, and every number it could have
 * reached is smaller (one compaction a millisecond at most), so the next request says it starts a
 * new window.
 */
export function expiredSummary(at: number): string {
  return `${compactionMarker(at, "expired")}\nThis conversation was idle past the retention period and its earlier messages were deleted; nothing said before carries over.`;
}

/** The bookkeeping a log implies about the inbox and the last turn. */
export interface LogProgress {
  /** Inbox entries the transcript already holds (opened a turn or were drained into one). */
  taken: number;
  /** The last turn's opening inbox index when it has no `turn-end` (interrupted), else null. */
  openTurn: { from: number; id: string; logIndex: number; trace?: string } | null;
}

export function progressOf(entries: readonly LogEntry[]): LogProgress {
  let taken = 0;
  let openTurn: LogProgress["openTurn"] = null;
  entries.forEach((e, logIndex) => {
    if (e.type === "reseed") {
      // The inbox was lost with the log: its indices start over.
      taken = 0;
      openTurn = null;
    } else if (e.type === "turn-start") {
      taken = e.from + 1;
      openTurn = { from: e.from, id: e.id, logIndex, ...(e.trace ? { trace: e.trace } : {}) };
    } else if (e.type === "taken") {
      taken = e.from + e.count;
    } else if (e.type === "turn-end") {
      openTurn = null;
    }
  });
  return { taken, openTurn };
}

/**
 * The answer of the turn opened at log index `from`, when it was logged (the last plain assistant
 * message since), else undefined. Logged is not delivered: the post to the platform comes after.
 */
export function answerSince(entries: readonly LogEntry[], from: number): string | undefined {
  for (let i = entries.length - 1; i > from; i--) {
    const e = entries[i]!;
    if (e.type === "message") return plainAnswer(e.message);
    // Soft compaction may follow the answer; the kept window then ends with it.
    if (e.type === "compaction") return plainAnswer(e.kept[e.kept.length - 1]);
    if (e.type === "reset") return undefined;
  }
  return undefined;
}

/** Whether any transcript message was logged after index `from` (the opening input reached the loop). */
export function messagesSince(entries: readonly LogEntry[], from: number): boolean {
  for (let i = from + 1; i < entries.length; i++) if (entries[i]!.type === "message") return true;
  return false;
}

/** The text of a shown answer; undefined for anything else (a cut-off or empty reply is not one). */
function plainAnswer(m: Message | undefined): string | undefined {
  return isShownAnswer(m) ? m.content.trim() : undefined;
}
