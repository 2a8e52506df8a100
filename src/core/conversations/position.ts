/**
 * Where a message stands in its thread on the platform (a Slack `ts`, a Discord snowflake): decimal
 * strings that order messages exactly. A conversation's transcript holds its thread up to the highest
 * position journaled there, so an adapter brings in only what lies after it (each message once).
 */
import { estimateTokens } from "../budget/estimate.js";

/** Earlier thread messages read when Neo is first addressed in a thread, at most (newest kept). */
export const EARLIER_MESSAGES = 20;
/** ...and at most this many tokens of them: a thread of long messages cannot fill the window. */
export const EARLIER_TOKENS = 4000;

/** Numeric order of two non-negative decimal strings ("1700000000.000100", "1234567890123456789"). */
export function comparePositions(a: string, b: string): number {
  const [ai = "", af = ""] = a.split(".");
  const [bi = "", bf = ""] = b.split(".");
  const ia = ai.replace(/^0+(?=\d)/, "");
  const ib = bi.replace(/^0+(?=\d)/, "");
  if (ia.length !== ib.length) return ia.length < ib.length ? -1 : 1;
  if (ia !== ib) return ia < ib ? -1 : 1;
  const width = Math.max(af.length, bf.length);
  const fa = af.padEnd(width, "0");
  const fb = bf.padEnd(width, "0");
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

/** The later of two positions (either may be missing). */
export function laterPosition(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return comparePositions(a, b) >= 0 ? a : b;
}

/**
 * The newest of `lines` (oldest first) that fit the bounds: at most EARLIER_MESSAGES, and together at
 * most EARLIER_TOKENS (a single message over the budget is left out, not cut).
 */
export function boundEarlier(lines: readonly string[]): string[] {
  const kept: string[] = [];
  let tokens = 0;
  for (let i = lines.length - 1; i >= 0 && kept.length < EARLIER_MESSAGES; i--) {
    const t = estimateTokens(lines[i]!);
    if (tokens + t > EARLIER_TOKENS) break;
    tokens += t;
    kept.unshift(lines[i]!);
  }
  return kept;
}
