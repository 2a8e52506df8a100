/**
 * A user message as it enters the transcript: prefixed with its author where several people speak,
 * and cut when it alone would crowd out the context window. A message longer than the window can
 * never be sent whole (the endpoint refuses the request, and every later turn of the thread with it),
 * so its middle is cut with a marker saying how much, and the user is told: pasted logs and
 * documents keep their beginning and their end, where the question and the error usually are.
 */
import { estimateTokens } from "../budget/estimate.js";
import type { TurnInput } from "./types.js";

/**
 * At most this share of the context window for one user message: the rest is for the system prompt,
 * tool schemas, some history and the answer, so one message never forces a compaction by itself.
 */
export const USER_MESSAGE_SHARE = 0.4;

export interface EnteredMessage {
  /** The transcript message's content (author prefix included). */
  content: string;
  /** The message's text as read (cut or not), without the prefix: what memory is searched with. */
  text: string;
  /** Set when the message was cut: its estimated size, what was kept, and the characters cut. */
  cut?: { tokens: number; maxTokens: number; chars: number };
}

/** Cut `text` to about `maxTokens`, keeping two thirds from its start and one third from its end. */
function cutMiddle(text: string, tokens: number, maxTokens: number): { text: string; chars: number } {
  // Characters are proportional to tokens closely enough here; the marker says exactly what went.
  const keep = Math.floor((text.length * maxTokens) / tokens);
  const head = Math.ceil((keep * 2) / 3);
  const tail = keep - head;
  const chars = text.length - head - tail;
  const marker = `\n\n[… ${chars} characters cut from the middle: the message was longer than I can read at once]\n\n`;
  return { text: `${text.slice(0, head)}${marker}${tail > 0 ? text.slice(-tail) : ""}`, chars };
}

/**
 * `files` (the intake's lines and fenced texts, already held to their own budget) follow the
 * person's words and are never cut here: a cut could fall inside a file's fence.
 */
export function enterUserMessage(
  input: TurnInput,
  shared: boolean,
  contextWindow: number,
  files = "",
): EnteredMessage {
  const maxTokens = Math.floor(contextWindow * USER_MESSAGE_SHARE);
  const tokens = estimateTokens(input.text);
  let text = input.text;
  let cut: EnteredMessage["cut"];
  if (tokens > maxTokens) {
    const c = cutMiddle(input.text, tokens, maxTokens);
    text = c.text;
    cut = { tokens, maxTokens, chars: c.chars };
  }
  const body = text && files ? `${text}\n${files}` : text || files;
  const content = shared ? `${input.speaker.displayName}: ${body}` : body;
  return cut ? { content, text, cut } : { content, text };
}

/**
 * The transcript message that carries earlier thread messages: set apart for the model, and with no
 * speaker, so write-back and recall never take other people's words for the requester's.
 */
export function contextMessage(context: readonly string[]): string {
  return `[Earlier messages in this thread, for context]\n${context.join("\n")}\n[End of context]`;
}

/** What the user is told when their message was cut. */
export function cutNotice(cut: NonNullable<EnteredMessage["cut"]>): string {
  const n = (x: number) => x.toLocaleString("en-US");
  return (
    `Your message is about ${n(cut.tokens)} tokens, more than I can read at once (about ${n(cut.maxTokens)}), ` +
    `so I read its beginning and its end and skipped ${n(cut.chars)} characters in the middle. ` +
    "If the part that matters was in there, send it on its own."
  );
}
