/**
 * `conversation_lookup`: search one conversation's whole log, including what compaction moved out
 * of the window and out of the summary's preserved identifiers. The log is append-only, so every
 * message ever sent in the conversation is still there; only what came before the last
 * `/neo reset` is out of reach (a reset means nothing said before it carries over).
 */
import { type Store, StoreUnavailableError } from "../../store/types.js";
import type { ConversationKey } from "../keys.js";
import type { Message } from "../llm/types.js";
import { CONVERSATION_LOOKUP_TOOL, type ToolResult } from "../tools/types.js";
import { readConversationLog } from "./journal.js";
import type { LogEntry } from "./log-entry.js";

/** Matches shown at most, newest first. */
export const LOOKUP_MAX_HITS = 8;
/** Characters of context on each side of a match. */
const AROUND = 160;
const RESET_SUMMARY = /^\[compaction \d+: reset\]/;

interface Hit {
  at: number;
  who: string;
  text: string;
  index: number;
  length: number;
}

/**
 * What a message is searched by. Lookups themselves (the calls and their results) are left out:
 * they would only find the question, and echo earlier answers.
 */
function searchable(m: Message, lookups: Set<string>): { who: string; text: string } | null {
  if (m.role === "tool") return lookups.has(m.tool_call_id) ? null : { who: "tool result", text: m.content };
  if (m.role === "user") return { who: "user", text: m.content };
  const calls = (m.tool_calls ?? []).flatMap((c) => {
    if (c.function.name !== CONVERSATION_LOOKUP_TOOL) return [`${c.function.name}(${c.function.arguments})`];
    lookups.add(c.id);
    return [];
  });
  const text = [m.content ?? "", ...calls].join("\n").trim();
  return text ? { who: calls.length ? "assistant call" : "assistant", text } : null;
}

/** Index of the first entry after the last reset (everything before it is out of reach). */
function afterLastReset(entries: readonly LogEntry[]): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type === "reset" || (e.type === "trim" && RESET_SUMMARY.test(e.summary))) return i + 1;
  }
  return 0;
}

function excerpt(h: Hit): string {
  const from = Math.max(0, h.index - AROUND);
  const to = Math.min(h.text.length, h.index + h.length + AROUND);
  const body = h.text.slice(from, to).replace(/\s+/g, " ").trim();
  const when = new Date(h.at).toISOString().slice(0, 16).replace("T", " ");
  return `- [${when} ${h.who}] ${from > 0 ? "…" : ""}${body}${to < h.text.length ? "…" : ""}`;
}

/**
 * Messages of the log (after the last reset) that contain `query` (case-insensitive); when none
 * does, those that contain every word of it. Rendered for the model, newest first.
 */
export function lookupInLog(entries: readonly LogEntry[], query: string): string {
  const q = query.trim().toLowerCase();
  if (!q) return "Give an identifier or a few words to look for.";
  const messages: Array<{ at: number; who: string; text: string; lower: string }> = [];
  const lookups = new Set<string>();
  for (const e of entries.slice(afterLastReset(entries))) {
    if (e.type !== "message") continue;
    const s = searchable(e.message, lookups);
    if (s) messages.push({ at: e.at, ...s, lower: s.text.toLowerCase() });
  }
  let hits: Hit[] = messages.flatMap((m) => {
    const index = m.lower.indexOf(q);
    return index < 0 ? [] : [{ at: m.at, who: m.who, text: m.text, index, length: q.length }];
  });
  if (hits.length === 0) {
    const words = q.split(/\s+/).filter(Boolean);
    if (words.length > 1) {
      hits = messages.flatMap((m) =>
        words.every((w) => m.lower.includes(w))
          ? [
              {
                at: m.at,
                who: m.who,
                text: m.text,
                index: m.lower.indexOf(words[0]!),
                length: words[0]!.length,
              },
            ]
          : [],
      );
    }
  }
  if (hits.length === 0) return `Nothing in this conversation's history matches "${query.trim()}".`;
  const shown = hits.reverse().slice(0, LOOKUP_MAX_HITS);
  const more = hits.length - shown.length;
  return [
    `${hits.length} match${hits.length === 1 ? "" : "es"} in this conversation's history (newest first):`,
    ...shown.map(excerpt),
    ...(more > 0 ? [`(${more} more not shown: look for something more specific.)`] : []),
  ].join("\n");
}

/** The `conversation_lookup` delegate over the store's conversation logs. */
export function createConversationLookup(
  store: Store,
): (query: string, ctx: { conversation: ConversationKey }) => Promise<ToolResult> {
  return async (query, ctx) => {
    try {
      return {
        content: lookupInLog(await readConversationLog(store, ctx.conversation), query),
        isError: false,
      };
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      return {
        content:
          "This conversation's history cannot be read right now (the store is unreachable). Try again later.",
        isError: true,
      };
    }
  };
}
