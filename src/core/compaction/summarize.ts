/**
 * The summarizer: the cheap model (main as its fallback, inside the client) reads the history being
 * compacted and fills the active-session schema.
 */
import type { LlmClient, Message, UsageTags } from "../llm/types.js";

export const SUMMARY_SECTIONS = ["GOAL", "DECISIONS", "ARTIFACTS", "OPEN", "LAST_RESULTS", "NEXT"] as const;

export const COMPACTION_SYSTEM_PROMPT = `You consolidate an agent's working history into an active-session summary.
Write exactly these six sections, each starting at the beginning of a line:
GOAL: <the task being pursued>
DECISIONS: <choices made, each with a one-line why>
ARTIFACTS: <the files / addresses / tx hashes / IDs that matter for the goal, verbatim, each with what it is>
OPEN: <unresolved questions or blockers>
LAST_RESULTS: <still-relevant tool outputs worth carrying forward>
NEXT: <the planned next step(s)>
Copy identifiers (ids, 0x addresses, transaction hashes, URLs, e-mail addresses, paths, file names, long numbers) character for character. You need not list every identifier: the runtime carries the ones you leave out separately. Be brief. Write nothing else.`;

/** Longest slice of one message shown to the summarizer; identifiers beyond it are restored by validation. */
const MAX_CHARS_PER_MESSAGE = 4000;

function clip(text: string): string {
  return text.length > MAX_CHARS_PER_MESSAGE
    ? `${text.slice(0, MAX_CHARS_PER_MESSAGE)} [... ${text.length - MAX_CHARS_PER_MESSAGE} more chars]`
    : text;
}

/**
 * The history as plain text for the summarizer. `previousSummary` is the written part only: the
 * preserved identifiers are carried by the runtime, not copied by the model.
 */
export function renderHistory(previousSummary: string | null, messages: readonly Message[]): string {
  const lines: string[] = [];
  if (previousSummary) lines.push(`PREVIOUS SUMMARY:\n${previousSummary}\n`);
  for (const m of messages) {
    if (m.role === "user") lines.push(`USER: ${clip(m.content)}`);
    else if (m.role === "tool") lines.push(`TOOL RESULT (${m.tool_call_id}): ${clip(m.content)}`);
    else {
      if (m.content) lines.push(`ASSISTANT: ${clip(m.content)}`);
      for (const c of m.tool_calls ?? [])
        lines.push(`ASSISTANT CALLS ${c.function.name}(${clip(c.function.arguments)}) [${c.id}]`);
    }
  }
  return lines.join("\n");
}

export class SummaryError extends Error {
  readonly code = "BAD_SUMMARY";
}

/**
 * Ask the cheap model for a summary of at most `maxTokens`. Throws `SummaryError` if the answer
 * lacks the schema or was cut off.
 */
export async function summarize(
  llm: LlmClient,
  history: string,
  tags: UsageTags,
  signal: AbortSignal,
  maxTokens: number,
): Promise<string> {
  const res = await llm.complete({
    role: "cheap",
    system: COMPACTION_SYSTEM_PROMPT,
    messages: [{ role: "user", content: history }],
    signal,
    maxTokens,
    tags: { ...tags, purpose: "compaction" },
  });
  const text = (res.content ?? "").trim();
  if (res.finishReason === "length") throw new SummaryError("summary was cut off by the output limit");
  if (!/^GOAL:/m.test(text)) throw new SummaryError("summary has no GOAL line");
  return text;
}
