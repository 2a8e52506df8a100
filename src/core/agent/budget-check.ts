/**
 * The USD budget as the loop asks it before each model call: 80 % is told once (a Notice and a
 * `budget_warning` event), 100 % ends the turn (a `budget_exceeded` event and an honest partial).
 */
import type { UserKey } from "../keys.js";
import { log } from "../log.js";
import type { TurnBudget } from "../usage/types.js";
import type { StopReason } from "./partial.js";
import type { TurnContext } from "./types.js";

/** Why the turn must stop, or undefined to go on. No budget set: always go on. */
export async function overBudget(
  budget: TurnBudget | undefined,
  user: UserKey,
  ctx: TurnContext,
): Promise<StopReason | undefined> {
  const v = await budget?.check(user);
  if (!v || v.kind === "ok") return undefined;
  const { scope, usedUsd, limitUsd } = v;
  const type = v.kind === "warning" ? "budget_warning" : "budget_exceeded";
  await ctx.onEvent?.({ type, scope, user, usedUsd, limitUsd, at: Date.now() });
  log.info({ conversation: ctx.conversation, event: type, scope, usedUsd, limitUsd }, "USD budget");
  if (v.kind === "exceeded") return { kind: "budget", why: v.text };
  await ctx.reporter.notice(v.text);
  return undefined;
}
