/**
 * What an approval message must show, platform-free: every action with all its arguments in full
 * (tool, recipient, amount, asset, network: whatever decides value), the totals per recipient, and
 * the plan-size limit. Adapters lay these lines out in their own markup and refuse, never cut, a
 * plan whose lines do not fit their limits (`packLines`).
 */
import { addDecimal } from "./decimal.js";
import { canonicalJson } from "./plan-hash.js";
import type { Plan, PlannedAction } from "./types.js";

/** Most actions one approval may carry: a person cannot check more in one look. */
export const MAX_PLAN_ACTIONS = 50;

/** Why a plan is not offered for approval; told to the model (so it can split) and to the user. */
export class PlanRefusedError extends Error {
  readonly code = "PLAN_REFUSED";
  constructor(reason: string) {
    super(reason);
    this.name = "PlanRefusedError";
  }
}

/** Undefined when the plan is small enough, else why not. */
export function planSizeProblem(plan: Plan): string | undefined {
  if (plan.actions.length === 0) return "the plan has no action";
  if (plan.actions.length > MAX_PLAN_ACTIONS) {
    return (
      `the plan has ${plan.actions.length} actions, more than the ${MAX_PLAN_ACTIONS} one approval may carry; ` +
      `split it into plans of at most ${MAX_PLAN_ACTIONS} actions`
    );
  }
  return undefined;
}

/** One action's arguments, complete and in a stable order. */
export function actionArguments(a: PlannedAction): string {
  return canonicalJson(a.arguments);
}

export interface RecipientTotal {
  recipient: string;
  asset: string;
  amount: string;
}

/** Spend summed per recipient and asset, in order of first appearance; no recipient = "(none named)". */
export function recipientTotals(plan: Plan): RecipientTotal[] {
  const totals = new Map<string, RecipientTotal>();
  for (const a of plan.actions) {
    if (!a.spend) continue;
    const recipient = a.spend.recipient ?? "(none named)";
    const key = `${recipient}\u0000${a.spend.asset}`;
    const prev = totals.get(key);
    totals.set(key, {
      recipient,
      asset: a.spend.asset,
      amount: prev ? addDecimal(prev.amount, a.spend.amount) : a.spend.amount,
    });
  }
  return [...totals.values()];
}

export type Packed = { ok: true; chunks: string[] } | { ok: false; line: number; length: number };

/**
 * Lines joined into as few chunks of at most `max` characters as keep every line whole. A line
 * longer than `max` cannot be shown whole: the caller refuses the plan.
 */
export function packLines(lines: readonly string[], max: number, sep = "\n"): Packed {
  const chunks: string[] = [];
  let current = "";
  for (const [i, line] of lines.entries()) {
    if (line.length > max) return { ok: false, line: i, length: line.length };
    if (current === "") current = line;
    else if (current.length + sep.length + line.length <= max) current += sep + line;
    else {
      chunks.push(current);
      current = line;
    }
  }
  if (current !== "") chunks.push(current);
  return { ok: true, chunks };
}
