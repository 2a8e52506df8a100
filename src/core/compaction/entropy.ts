/**
 * The trust contract (seed i3): every high-entropy token of the compacted history must survive
 * compaction verbatim. These are the strings a model cannot re-derive: ids, hex addresses,
 * transaction hashes, URLs, paths, UUIDs/ULIDs, long numbers.
 */
import type { Message } from "../llm/types.js";

/** Ordered most specific first; a match consumes its text so shorter patterns don't re-match it. */
const PATTERNS: readonly RegExp[] = [
  /\bhttps?:\/\/[^\s"'<>)\]}`]+/g, // URLs
  /\b0x[0-9a-fA-F]{8,}\b/g, // hex addresses, tx hashes
  /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g, // UUIDs
  /\b[0-9A-HJKMNP-TV-Z]{26}\b/g, // ULIDs
  /\b[0-9a-fA-F]{32,}\b/g, // bare hashes
  /(?:~|\.{1,2})?(?:\/[\w.@+-]+){2,}\/?/g, // paths with at least two segments
  /\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{7,}\b/g, // ids: letters and digits, 8+ chars
  /\b\d{6,}\b/g, // long numbers
];

/** Trailing punctuation a sentence adds to a URL or path but that is not part of it. */
const TRAILING = /[.,;:!?]+$/;

/** High-entropy tokens of `text`, in order of first appearance, without duplicates. */
export function highEntropyTokens(text: string): string[] {
  const found: Array<{ at: number; token: string }> = [];
  let rest = text;
  for (const re of PATTERNS) {
    rest = rest.replace(re, (m: string, ...args: unknown[]) => {
      const at = args.find((a) => typeof a === "number") as number;
      const token = m.replace(TRAILING, "");
      if (token.length >= 6) found.push({ at, token });
      return " ".repeat(m.length);
    });
  }
  found.sort((a, b) => a.at - b.at);
  return [...new Set(found.map((f) => f.token))];
}

/** The text of a transcript that carries identifiers: contents, tool arguments, results. */
export function transcriptText(messages: readonly Message[]): string {
  const parts: string[] = [];
  for (const m of messages) {
    if (m.content) parts.push(m.content);
    if (m.role === "assistant") for (const c of m.tool_calls ?? []) parts.push(c.function.arguments);
  }
  return parts.join("\n");
}

export const PRESERVED_HEADING = "ARTIFACTS (preserved verbatim):";

/**
 * Append, under `ARTIFACTS (preserved verbatim):`, every token of `history` the summary dropped.
 * Returns the summary unchanged when nothing is missing.
 */
export function validateSummary(summary: string, history: string): { summary: string; restored: string[] } {
  const restored = highEntropyTokens(history).filter((t) => !summary.includes(t));
  if (!restored.length) return { summary, restored };
  return {
    summary: `${summary.trimEnd()}\n${PRESERVED_HEADING}\n${restored.map((t) => `- ${t}`).join("\n")}`,
    restored,
  };
}
