/**
 * What the loop itself writes into the transcript, and how a reader tells the model's shown answers
 * from replies the user never saw. Nudges always follow an assistant message (the reply they are
 * about is recorded as it was), so the transcript keeps turn alternation and every request extends
 * the one before it.
 */
import type { AssistantMessage, Message } from "../llm/types.js";

/** Runtime notes the loop adds as user-role messages (visible to the model, part of the transcript). */
export const LENGTH_NUDGE =
  "[Neo runtime] Your last reply was cut off by the output limit and was not shown. Answer again, more compactly.";
export const EMPTY_NUDGE =
  "[Neo runtime] Your last reply was empty. Continue: answer the user, or call a tool.";

/** Ends a reply that hit the output limit, as the transcript keeps it (never shown to the user). */
export const CUT_OFF_MARK = "[… cut off here by the output limit; not shown to the user]";

/** How much of a cut-off reply the transcript keeps: enough for the model to see what it was doing. */
export const CUT_OFF_KEEP_CHARS = 600;

/** The transcript's record of a reply cut off by the output limit: its start, then the mark. */
export function cutOffReply(content: string | null): AssistantMessage {
  const text = (content ?? "").trim();
  const head = text.length > CUT_OFF_KEEP_CHARS ? `${text.slice(0, CUT_OFF_KEEP_CHARS)}…` : text;
  return { role: "assistant", content: head ? `${head}\n${CUT_OFF_MARK}` : CUT_OFF_MARK };
}

/**
 * An answer the user was shown: an assistant message without tool calls, with text, that is not a
 * cut-off reply. Empty and cut-off replies are followed by a nudge and are not answers.
 */
export function isShownAnswer(m: Message | undefined): m is AssistantMessage & { content: string } {
  if (m?.role !== "assistant" || m.tool_calls?.length) return false;
  const text = m.content?.trim() ?? "";
  return text !== "" && !text.endsWith(CUT_OFF_MARK);
}
