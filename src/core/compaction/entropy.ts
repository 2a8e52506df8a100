/**
 * The trust contract's identifiers (seed i3): the high-entropy tokens of a history, which must
 * survive compaction verbatim because a model cannot re-derive them: URLs, e-mail addresses, hex
 * addresses and transaction hashes, UUIDs/ULIDs, bare and short (git) hashes, paths, file names
 * with an extension, ids mixing letters and digits, long numbers. `preserved.ts` keeps them.
 */
import type { Message } from "../llm/types.js";

/**
 * Ordered most specific first; a match consumes its text so later patterns don't re-match it.
 * `min` is the shortest match kept (shorter ones are ordinary words more often than identifiers).
 */
const PATTERNS: ReadonlyArray<{ re: RegExp; min: number }> = [
  { re: /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)\]}`]+/gi, min: 6 }, // URLs (https, ipfs, s3, wss, ...)
  { re: /\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b/g, min: 6 }, // e-mail addresses
  { re: /\b0x[0-9a-fA-F]{8,}\b/g, min: 6 }, // hex addresses, tx hashes
  { re: /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g, min: 6 }, // UUIDs
  { re: /\b[0-9A-HJKMNP-TV-Z]{26}\b/g, min: 6 }, // ULIDs
  { re: /\b[0-9a-fA-F]{32,}\b/g, min: 6 }, // bare hashes
  { re: /(?:~|\.{1,2})?(?:\/[\w.@+-]+){2,}\/?/g, min: 6 }, // paths with at least two segments
  { re: /\b(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{7,12}\b/g, min: 7 }, // short git SHAs
  { re: /\b[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,9}\b/g, min: 5 }, // file names with an extension
  { re: /\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{7,}\b/g, min: 6 }, // ids: letters and digits, 8+ chars
  { re: /\b\d{6,}\b/g, min: 6 }, // long numbers
];

/** Trailing punctuation a sentence adds to a URL or path but that is not part of it. */
const TRAILING = /[.,;:!?]+$/;

/** Every high-entropy token of `text` with where it starts, in text order. */
function sightings(text: string): Array<{ at: number; token: string }> {
  const found: Array<{ at: number; token: string }> = [];
  let rest = text;
  for (const { re, min } of PATTERNS) {
    rest = rest.replace(re, (m: string, ...args: unknown[]) => {
      const at = args.find((a) => typeof a === "number") as number;
      const token = m.replace(TRAILING, "");
      if (token.length >= min) found.push({ at, token });
      return " ".repeat(m.length);
    });
  }
  return found.sort((a, b) => a.at - b.at);
}

/** High-entropy tokens of `text`, in order of first appearance, without duplicates. */
export function highEntropyTokens(text: string): string[] {
  return [...new Set(sightings(text).map((f) => f.token))];
}

/** High-entropy tokens of `text` without duplicates, ordered by their last appearance (oldest first). */
export function tokensByRecency(text: string): string[] {
  const found = sightings(text);
  const seen = new Set<string>();
  const newestFirst: string[] = [];
  for (let i = found.length - 1; i >= 0; i--) {
    const t = found[i]!.token;
    if (!seen.has(t)) newestFirst.push(t);
    seen.add(t);
  }
  return newestFirst.reverse();
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
