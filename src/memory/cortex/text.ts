/**
 * Text helpers for the cortex: normalisation for dedupe, tokenisation for lexical ranking, and a
 * cheap token estimate for budgets.
 */

/** Dedupe identity of a statement: case, spacing and trailing punctuation do not matter. */
export function normalizeStatement(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/[\s.!?;,:]+$/u, "")
    .trim();
}

const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have he her him his how i if in into is it its " +
    "just me my no not of on or our she so than that the their them then there these they this to too us was we were what " +
    "when where which who why will with would you your yours about also any all am some more most over only own same very"
  ).split(" "),
);

/**
 * Lower-cased word and identifier tokens, stopwords removed, a plural `s` folded. Identifiers such
 * as `0xAbC123` or `build-42` survive whole as well as in parts, so verbatim ids still match.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const lower = text.normalize("NFKC").toLowerCase();
  for (const word of lower.match(/[\p{L}\p{N}]+(?:[-_.][\p{L}\p{N}]+)*/gu) ?? []) {
    const parts = word.split(/[-_.]/);
    if (parts.length > 1) out.push(word);
    for (const p of parts) {
      if (p.length < 2 || STOPWORDS.has(p)) continue;
      out.push(p.length > 3 && p.endsWith("s") && !p.endsWith("ss") ? p.slice(0, -1) : p);
    }
  }
  return out;
}

/** Roughly 4 characters per token: good enough for packing memory into a budget. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
