/**
 * A cheap token estimator for the o200k family (GPT-4o and later). It walks the text once and
 * prices each run the way the tokenizer's pre-split does: letter runs by length, digits in groups
 * of three, punctuation and symbols, newlines. Measured against the real tokenizer (gpt-tokenizer,
 * o200k_base) on prose, code and JSON in `bench/loop.bench.ts`; goal ±10 %.
 */

// Character classes, filled once: 0 other, 1 letter, 2 digit, 3 space, 4 newline, 5 punctuation.
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z]/.test(ch)) CLASS[c] = 1;
  else if (/[0-9]/.test(ch)) CLASS[c] = 2;
  else if (ch === " " || ch === "\t") CLASS[c] = 3;
  else if (ch === "\n" || ch === "\r") CLASS[c] = 4;
  else CLASS[c] = 5;
}

const PUNCT_PER_TOKEN = 2.5;
const LETTERS_PER_TOKEN = 12;
/** Hex, base64 and ids: letters and digits mixed merge poorly. */
const MIXED_CHARS_PER_TOKEN = 1.9;

function isAlnum(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** End of the ASCII letter/digit run at `i`, and whether it mixes letters and digits. */
function mixedRunEnd(text: string, i: number): number {
  let j = i;
  let letters = false;
  let digits = false;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (!isAlnum(c)) break;
    if (c <= 57) digits = true;
    else letters = true;
    j++;
  }
  return letters && digits && j - i >= 8 ? j : -1;
}

/** Tokens of a run of `n` letters (common words are one token; long ones split). */
function letterTokens(n: number): number {
  return n <= LETTERS_PER_TOKEN ? 1 : 1 + Math.ceil((n - LETTERS_PER_TOKEN) / 5);
}

/** Estimated o200k tokens of `text`. */
export function estimateTokens(text: string): number {
  return scan(text, 0, 0, undefined);
}

/** Characters between the points `estimateResumable` notes. */
export const RESUME_STRIDE = 128;

/**
 * The estimate of `text` resumed at position `from`, whose first `from` characters were counted as
 * `tokens` (a point noted for an earlier text sharing them, and the character at `from`). Notes in
 * `marks`, as [position, tokens] pairs, points where a later text may resume: at most one per
 * RESUME_STRIDE characters, each at a space, newline or punctuation run, so that no run before it
 * looked past it.
 */
export function estimateResumable(text: string, from: number, tokens: number, marks: number[]): number {
  return scan(text, from, tokens, marks);
}

function scan(text: string, from: number, counted: number, marks: number[] | undefined): number {
  let tokens = counted;
  let i = from;
  let nextMark = from;
  const len = text.length;
  while (i < len) {
    const code = text.charCodeAt(i);
    const cls = code < 128 ? CLASS[code]! : 1;
    if (marks !== undefined && cls >= 3 && i >= nextMark) {
      marks.push(i, tokens);
      nextMark = i + RESUME_STRIDE;
    }
    let j = i + 1;
    const mixedEnd = cls === 1 || cls === 2 ? mixedRunEnd(text, i) : -1;
    if (mixedEnd > 0) {
      j = mixedEnd;
      tokens += Math.ceil((j - i) / MIXED_CHARS_PER_TOKEN);
    } else if (cls === 1) {
      // A word piece ends where lower case turns to upper (camelCase splits, as the pre-split does).
      // Non-ASCII counts as letters but costs more (multi-byte merges are rarer).
      let wide = code >= 128 ? 1 : 0;
      let pieceStart = i;
      let prevLower = code >= 97 && code <= 122;
      while (j < len) {
        const c = text.charCodeAt(j);
        if (c < 128 && CLASS[c] !== 1) break;
        if (c >= 128) wide++;
        const upper = c >= 65 && c <= 90;
        if (upper && prevLower) {
          tokens += letterTokens(j - pieceStart);
          pieceStart = j;
        }
        prevLower = c >= 97 && c <= 122;
        j++;
      }
      tokens += letterTokens(j - pieceStart) + Math.ceil(wide / 2);
    } else if (cls === 2) {
      while (j < len && CLASS[text.charCodeAt(j)] === 2) j++;
      tokens += Math.ceil((j - i) / 3);
    } else if (cls === 3) {
      // A single space joins the next word's token; longer indentation runs are their own token.
      while (j < len && CLASS[text.charCodeAt(j)] === 3) j++;
      if (j - i > 1) tokens += 1;
    } else if (cls === 4) {
      while (j < len && CLASS[text.charCodeAt(j)] === 4) j++;
      tokens += 1;
    } else {
      while (j < len && CLASS[text.charCodeAt(j)] === 5) j++;
      // One punctuation mark right before a word is absorbed into the word's token.
      const next = j < len ? text.charCodeAt(j) : 0;
      const absorbed = next >= 128 || CLASS[next] === 1 ? 1 : 0;
      tokens += Math.ceil((j - i - absorbed) / PUNCT_PER_TOKEN);
    }
    i = j;
  }
  return tokens;
}
