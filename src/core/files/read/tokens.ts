/**
 * Text cut to a budget of real tokens (o200k, the GPT-4o family's tokenizer), counted so that the
 * count is an upper bound for every script. Byte-level BPE spends at most one token per UTF-8 byte,
 * but a long run without spaces (emoji, symbols, some scripts) is one pre-split piece whose merging
 * is quadratic in its length (56,000 emoji: 30 s). So the text is counted in chunks of at most
 * `CHUNK` characters (split at a space or newline where there is one), each chunk encoded on its
 * own, plus one token per chunk for a merge its boundary may have prevented. Only the kept prefix is
 * ever encoded: a 20 MB file costs what its first `maxTokens` do.
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base";

const CHUNK = 512;

/** The end of the chunk starting at `i`: at most CHUNK characters, at a whitespace if one is in its second half. */
function chunkEnd(text: string, i: number): number {
  let end = Math.min(text.length, i + CHUNK);
  if (end < text.length) {
    // Never split a surrogate pair.
    if (/[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
    for (let j = end; j > i + CHUNK / 2; j--) {
      if (/\s/.test(text[j - 1]!)) return j;
    }
  }
  return end;
}

/** Tokens of one chunk, including the boundary allowance. */
function chunkTokens(chunk: string): number {
  return encode(chunk).length + 1;
}

/** The upper-bound token count of `text`. */
export function countTokens(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; ) {
    const end = chunkEnd(text, i);
    n += chunkTokens(text.slice(i, end));
    i = end;
  }
  return n;
}

export interface Kept {
  text: string;
  /** Upper-bound tokens of `text`. */
  tokens: number;
  /** Characters left out (0 when the text was kept whole). */
  cutChars: number;
}

/** The longest prefix of `text` whose upper-bound count is at most `maxTokens`. */
export function keepTokens(text: string, maxTokens: number): Kept {
  let n = 0;
  let i = 0;
  while (i < text.length) {
    const end = chunkEnd(text, i);
    const t = chunkTokens(text.slice(i, end));
    if (n + t > maxTokens) {
      // The last chunk that does not fit whole: the longest prefix of it that does (binary search).
      let lo = 0;
      let hi = end - i;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (n + chunkTokens(text.slice(i, i + mid)) <= maxTokens) lo = mid;
        else hi = mid - 1;
      }
      if (lo > 0 && /[\uD800-\uDBFF]/.test(text[i + lo - 1]!)) lo--;
      if (lo > 0) n += chunkTokens(text.slice(i, i + lo));
      return { text: text.slice(0, i + lo), tokens: n, cutChars: text.length - i - lo };
    }
    n += t;
    i = end;
  }
  return { text, tokens: n, cutChars: 0 };
}
