/**
 * Erasure of one person's words from a conversation (`/neo forget`, an admin's forget), run as a
 * control under the conversation's lease. A DM of theirs keeps no words at all; in a shared thread
 * each of their messages becomes a removal marker (role and order kept, so tool calls still pair and
 * no message is empty), and lines of theirs brought along as context go too. Every summary in the log
 * is cut to its compaction marker, and a last `trim` opens a new window (a new marker) whose summary
 * says what happened: the next request does not claim to extend one that held their words.
 */
import { compactionMarker, compactionNumber } from "../compaction/marker.js";
import type { Message } from "../llm/types.js";
import type { LogEntry } from "./log-entry.js";
import { replay } from "./replay.js";
import type { Control } from "./thread-state.js";
import type { InboundMessage } from "./types.js";

export const REMOVED = "[message removed at the author's request]";
/** Who an erased message's inbox entry names instead of its author. */
const REMOVED_SPEAKER = { userKey: "erased", displayName: "(removed)" };

/** What is erased: whose messages, and the texts they sent (to find them quoted as context). */
export interface Erasure {
  isTheirs(user: string): boolean;
}

/** Whether the conversation is the person's own DM: its inbox holds their messages, all in a DM. */
export function isTheirDm(inbox: readonly InboundMessage[], e: Erasure): boolean {
  return inbox.length > 0 && inbox.every((m) => e.isTheirs(m.speaker.userKey) && m.place?.kind === "dm");
}

/** Context lines quoting any of `texts` are replaced by the marker. */
function scrubLines(lines: readonly string[], texts: readonly string[]): string[] {
  return lines.map((l) => (texts.some((t) => l.includes(t)) ? REMOVED : l));
}

function scrubText(text: string, texts: readonly string[]): string {
  return texts.some((t) => text.includes(t)) ? scrubLines(text.split("\n"), texts).join("\n") : text;
}

/** The inbox with the person's entries emptied and their words cut from others' context. */
export function scrubInbox(
  inbox: readonly InboundMessage[],
  e: Erasure,
  texts: readonly string[],
): InboundMessage[] {
  return inbox.map((m) => {
    if (e.isTheirs(m.speaker.userKey)) {
      const { files: _f, context: _c, viewing: _v, ...rest } = m;
      return { ...rest, speaker: REMOVED_SPEAKER, text: REMOVED };
    }
    return m.context ? { ...m, context: scrubLines(m.context, texts) } : m;
  });
}

function scrubMessage(m: Message, e: Erasure, texts: readonly string[], dm: boolean): Message {
  // In their DM every message goes: what Neo answered them is theirs too.
  if (dm) return { role: "user", content: REMOVED };
  if (m.role !== "user") return m;
  if (m.speaker && e.isTheirs(m.speaker.userKey)) return { role: "user", content: REMOVED };
  return { ...m, content: scrubText(m.content, texts) };
}

const markerOnly = (summary: string) => compactionMarker(compactionNumber(summary), "erased");
const scrubAll = (ms: readonly Message[], e: Erasure, texts: readonly string[], dm: boolean) =>
  ms.map((m) => scrubMessage(m, e, texts, dm));

/** The log rewritten without the person's words, ending in a new window (see the file comment). */
export function scrubLog(
  entries: readonly LogEntry[],
  e: Erasure,
  texts: readonly string[],
  dm: boolean,
  at: number,
): LogEntry[] {
  const out: LogEntry[] = entries.map((entry) => {
    switch (entry.type) {
      case "message":
        return { ...entry, message: scrubMessage(entry.message, e, texts, dm) };
      case "compaction":
        return { ...entry, summary: markerOnly(entry.summary), kept: scrubAll(entry.kept, e, texts, dm) };
      case "trim":
        return { ...entry, summary: markerOnly(entry.summary) };
      case "reseed":
        return {
          ...entry,
          working: scrubAll(entry.working, e, texts, dm),
          summary: entry.summary === null ? null : markerOnly(entry.summary),
        };
      default:
        return entry;
    }
  });
  const { working, summary } = replay(entries);
  const note = dm
    ? "This conversation was erased at its author's request; nothing said before carries over."
    : "Messages of a participant were removed at their request; the earlier summary was cleared with them.";
  out.push({
    type: "trim",
    drop: dm ? working.length : 0,
    summary: `${compactionMarker(compactionNumber(summary) + 1, "erased")}\n${note}`,
    at,
  });
  return out;
}

/**
 * The control: read inbox and log, rewrite both without the person's words, and drop this
 * instance's view (and what it kept of their unread messages), so nothing rebuilds them.
 */
export function eraseFrom(e: Erasure): Control["run"] {
  return async (_live, env, t) => {
    const { journal } = env;
    const inbox = await journal.inboxFrom(t.key, 0);
    const texts = inbox
      .filter((m) => e.isTheirs(m.speaker.userKey) && m.text.trim() !== "")
      .map((m) => m.text);
    const dm = isTheirDm(inbox, e);
    const entries = await journal.readLog(t.key);
    await journal.replaceInbox(t.key, scrubInbox(inbox, e, texts));
    await journal.replaceLog(t.key, scrubLog(entries, e, texts, dm, Date.now()));
    t.live = null;
    for (const [id, m] of t.unfetched) if (e.isTheirs(m.speaker.userKey)) t.unfetched.delete(id);
  };
}
