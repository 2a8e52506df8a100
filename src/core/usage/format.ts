/** Text for people: budget notices and stops, `/neo usage` and the `/neo status` usage lines. */
import type { BudgetScope, PeriodTotals } from "./types.js";

export const tokens = (n: number): string => Math.round(n).toLocaleString("en-US");

export function usd(n: number): string {
  if (n === 0) return "$0";
  return n >= 1 ? `$${n.toFixed(2)}` : `$${n.toPrecision(2)}`;
}

/** `1 call`, `2 calls`. */
export const count = (n: number, noun: string): string => `${tokens(n)} ${noun}${n === 1 ? "" : "s"}`;

/** `5 h 12 min`, `12 min`, `under a minute`. */
export function duration(ms: number): string {
  const mins = Math.ceil(ms / 60_000);
  if (mins <= 0) return "under a minute";
  const h = Math.floor(mins / 60);
  const m = mins % 60;
  return h > 0 ? `${h} h${m ? ` ${m} min` : ""}` : `${m} min`;
}

// The epsilon keeps 0.00085 / 0.001 (84.999… in floating point) at 85 %.
export const pctOf = (used: number, limit: number) => `${Math.floor((used * 100) / limit + 1e-9)} %`;

/**
 * The 80 % notice, or why the turn stopped at 100 % (no final period: the honest partial adds it).
 */
export function budgetText(
  kind: "warning" | "exceeded",
  b: { scope: BudgetScope; usedUsd: number; limitUsd: number; resetsAt: number },
  at: number,
): string {
  const whose = b.scope === "user" ? "your daily budget" : "this deployment's daily budget";
  const resets = `it resets at 00:00 UTC (in ${duration(b.resetsAt - at)})`;
  if (kind === "warning") {
    const who = b.scope === "user" ? "you have used" : "this deployment has used";
    const of = b.scope === "user" ? "your" : "its";
    return (
      `Heads-up: ${who} ${usd(b.usedUsd)} of ${of} daily budget of ${usd(b.limitUsd)} (${pctOf(b.usedUsd, b.limitUsd)}). ` +
      `At 100 % I stop and tell you where I got to; ${resets}.`
    );
  }
  return `I stopped because ${whose} of ${usd(b.limitUsd)} is used up (${usd(b.usedUsd)} spent today); ${resets}`;
}

/** `62 % cache hits`: the share of prompt tokens read from the provider's prompt cache. */
export const cacheHitText = (t: Pick<PeriodTotals, "promptTokens" | "cachedTokens">): string =>
  `${Math.floor((t.cachedTokens * 100) / t.promptTokens)} % of input from cache`;

/**
 * `$0.0042 · 1,234 tokens · 3 model calls · 62 % of input from cache` (the last where the provider
 * reported cached input; `/neo status` says the rate whatever it is, for the operator).
 */
export const totalsText = (t: PeriodTotals, priced: boolean): string =>
  [
    ...(priced ? [usd(t.usd)] : []),
    `${tokens(t.tokens)} tokens`,
    count(t.calls, "model call"),
    ...(t.cachedTokens > 0 ? [cacheHitText(t)] : []),
  ].join(" · ");
