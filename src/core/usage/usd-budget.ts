/**
 * The USD budgets (seed 004: `budget_warning` at 80 %, `budget_exceeded` at 100 %): each user's per
 * UTC day (`NEO_BUDGET_USD_DAILY`, or the user's own set by `/neo budget`, kept in the store) and the
 * whole deployment's (`NEO_BUDGET_USD_DAILY_DEPLOYMENT`). Spend is read from the durable usage
 * counts, so every instance sees one total and a restart forgets nothing.
 */
import type { Store } from "../../store/types.js";
import { hashTag, type UserKey } from "../keys.js";
import { budgetText } from "./format.js";
import { nextUtcMidnight, utcDay } from "./periods.js";
import type { BudgetScope, BudgetVerdict } from "./types.js";
import { DEPLOYMENT, type UsageStore } from "./usage-store.js";

export const WARN_AT = 0.8;
const userLimitKey = (user: UserKey) => `budget:user:${hashTag(user)}`;
const warnedKey = (day: string, scope: BudgetScope, user: UserKey) =>
  `budget:warned:${day}:${scope}:${hashTag(user)}`;

export interface UsdBudgetOptions {
  store: Store;
  usage: UsageStore;
  /** Default per-user daily limit; undefined = none unless an admin set one for the user. */
  userDaily?: number | undefined;
  deploymentDaily?: number | undefined;
}

export interface UsdBudget {
  /** The requester's verdict now; rejects when the store cannot be read. */
  check(user: UserKey, at: number): Promise<BudgetVerdict>;
  /** The user's daily limit (their own, else the default); undefined = unlimited. */
  userLimit(user: UserKey): Promise<number | undefined>;
  /** Set (or, with undefined, clear back to the default) one user's daily limit. */
  setUserLimit(user: UserKey, usd: number | undefined): Promise<void>;
  readonly userDaily: number | undefined;
  readonly deploymentDaily: number | undefined;
}

export function createUsdBudget(opts: UsdBudgetOptions): UsdBudget {
  const { store, usage } = opts;

  const userLimit = async (user: UserKey) => (await store.get<number>(userLimitKey(user))) ?? opts.userDaily;

  const judge = async (
    scope: BudgetScope,
    user: UserKey,
    usedUsd: number,
    limitUsd: number | undefined,
    at: number,
  ): Promise<BudgetVerdict> => {
    if (limitUsd === undefined || usedUsd < limitUsd * WARN_AT) return { kind: "ok" };
    const resetsAt = nextUtcMidnight(at);
    const base = { scope, usedUsd, limitUsd, resetsAt };
    if (usedUsd >= limitUsd) {
      return { kind: "exceeded", ...base, text: budgetText("exceeded", base, at) };
    }
    // Told once per user, scope and day, whichever instance runs the turn.
    const first = await store.setIfAbsent(warnedKey(utcDay(at), scope, user), 1, 2 * 86_400_000);
    return first ? { kind: "warning", ...base, text: budgetText("warning", base, at) } : { kind: "ok" };
  };

  return {
    userDaily: opts.userDaily,
    deploymentDaily: opts.deploymentDaily,
    userLimit,
    async setUserLimit(user, usd) {
      if (usd === undefined) await store.delete(userLimitKey(user));
      else await store.set(userLimitKey(user), usd);
    },
    async check(user, at) {
      const day = { kind: "day" as const, at };
      const [own, limit, all] = await Promise.all([
        usage.totals(user, day),
        userLimit(user),
        opts.deploymentDaily === undefined ? undefined : usage.totals(DEPLOYMENT, day),
      ]);
      const verdicts = [
        await judge("user", user, own.usd, limit, at),
        all ? await judge("deployment", user, all.usd, opts.deploymentDaily, at) : ({ kind: "ok" } as const),
      ];
      return (
        verdicts.find((v) => v.kind === "exceeded") ??
        verdicts.find((v) => v.kind === "warning") ?? { kind: "ok" }
      );
    },
  };
}
