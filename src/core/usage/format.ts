/** Text for people: the budget refusal and the `/neo status` usage lines. */
import type { UsageTotals } from "../llm/usage-ledger.js";

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

/** What a user over budget is told: how much they used, the limit, when it resets. */
export function budgetMessage(used: number, limit: number, resetsInMs: number): string {
  return (
    `You've reached your daily limit: ${tokens(used)} of ${tokens(limit)} tokens used today. ` +
    `It resets at 00:00 UTC (in ${duration(resetsInMs)}); I can't answer you until then.`
  );
}

/** `1,234 tokens ($0.0042)`; the cost only when prices are configured. */
export function totalsText(
  t: Pick<UsageTotals, "promptTokens" | "completionTokens" | "costUsd">,
  priced: boolean,
): string {
  const sum = `${tokens(t.promptTokens + t.completionTokens)} tokens`;
  return priced ? `${sum} (${usd(t.costUsd)})` : sum;
}
