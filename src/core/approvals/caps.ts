/**
 * Per-user spend caps over a rolling 24 h window. A cap has a unit (an asset: `/neo limit @u 10
 * USDC`; without an asset, `NEO_CAP_UNIT`) and every escalate action is valued in that unit
 * (`valuation.ts`); an action whose value cannot be read counts as over any cap. A user with no cap
 * is not limited.
 *
 * Spend is held in one ledger per user, changed only with `updateAtomically` (compare-and-set on
 * the store, a Lua script on Redis): Approve reserves the plan's amounts, a failed execution
 * releases them, a successful one turns the reservation into spend of what ran. Reserved and spent
 * both count, so concurrent approvals can never pass the cap together.
 */

import type { Store } from "../../store/types.js";
import { updateAtomically } from "../../store/update.js";
import { hashTag, type UserKey } from "../keys.js";
import { addDecimal, compareDecimal, toDecimal } from "./decimal.js";
import { normaliseAsset } from "./spend.js";
import type { Plan } from "./types.js";
import { type Rates, valueIn } from "./valuation.js";

export const DAY_MS = 24 * 60 * 60 * 1000;

/** One plan's amounts in the ledger, per asset; `reserved` from Approve until the outcome is known. */
export interface LedgerEntry {
  /** The approval id (one entry per approval). */
  id: string;
  at: number;
  state: "reserved" | "spent";
  amounts: Record<string, string>;
  /** True when an action of the plan had no readable amount (its value is unknown). */
  unknown: boolean;
}

interface Ledger {
  entries: LedgerEntry[];
}

export type CapCheck = { ok: true } | { ok: false; asset: string; reason: string };

export interface SpendCaps {
  /** Set (or with `null`, lift) a user's cap in one unit. */
  setCap(userKey: UserKey, asset: string, amount: string | null, by: UserKey): Promise<void>;
  caps(userKey: UserKey): Promise<Record<string, string>>;
  /** Reserved and spent per asset in the window ending now. */
  spent(userKey: UserKey): Promise<Record<string, string>>;
  /** Would this plan, added to the window's reserved and spent amounts, stay within every cap? */
  check(userKey: UserKey, plan: Plan): Promise<CapCheck>;
  /** Atomically reserve the plan's amounts under approval `id`, or refuse (nothing written). */
  reserve(userKey: UserKey, id: string, plan: Plan): Promise<CapCheck>;
  /**
   * The outcome of approval `id`: `ran` (the actions that ran) becomes spend; nothing ran (or
   * `null`) releases the reservation.
   */
  settle(userKey: UserKey, id: string, ran: Plan | null): Promise<void>;
}

/** Amounts per asset of a plan, and whether any action's amount is unreadable. */
export function planAmounts(plan: Plan): { amounts: Record<string, string>; unknown: boolean } {
  const amounts: Record<string, string> = {};
  let unknown = false;
  for (const a of plan.actions) {
    if (!a.spend) unknown = true;
    else amounts[a.spend.asset] = addDecimal(amounts[a.spend.asset] ?? "0", a.spend.amount);
  }
  return { amounts, unknown };
}

/** Spend per asset of one plan (actions with a readable amount). */
export function planSpend(plan: Plan): Record<string, string> {
  return planAmounts(plan).amounts;
}

export interface SpendCapsOptions {
  store: Store;
  /** `NEO_ASSET_RATES`: `FROM/TO` → rate. */
  rates?: Rates;
  windowMs?: number;
  now?: () => number;
}

export function createSpendCaps(opts: SpendCapsOptions): SpendCaps {
  const { store } = opts;
  const rates = opts.rates ?? {};
  const windowMs = opts.windowMs ?? DAY_MS;
  const now = opts.now ?? Date.now;
  const capKey = (u: UserKey) => `caps:limit:${hashTag(u)}`;
  const ledgerKey = (u: UserKey) => `caps:ledger:${hashTag(u)}`;

  const live = (l: Ledger | undefined): LedgerEntry[] => {
    const since = now() - windowMs;
    return (l?.entries ?? []).filter((e) => e.at > since);
  };

  async function caps(userKey: UserKey): Promise<Record<string, string>> {
    return (await store.get<Record<string, string>>(capKey(userKey))) ?? {};
  }

  /** The first cap the entries plus `wanted` break, with the numbers; ok when none. */
  function judge(limits: Record<string, string>, entries: LedgerEntry[], wanted: LedgerEntry): CapCheck {
    for (const [unit, cap] of Object.entries(limits)) {
      let used = "0";
      let usedUnknown = false;
      for (const e of entries) {
        for (const [asset, amount] of Object.entries(e.amounts)) {
          const v = valueIn(unit, asset, amount, rates);
          if (v === undefined) usedUnknown = true;
          else used = addDecimal(used, v);
        }
        if (e.unknown) usedUnknown = true;
      }
      let value = "0";
      const unreadable: string[] = [];
      for (const [asset, amount] of Object.entries(wanted.amounts)) {
        const v = valueIn(unit, asset, amount, rates);
        if (v === undefined) unreadable.push(`${amount} ${asset}`);
        else value = addDecimal(value, v);
      }
      if (wanted.unknown) unreadable.push("an action with no readable amount");
      if (unreadable.length > 0) {
        return {
          ok: false,
          asset: unit,
          reason:
            `over the spend cap: the value of ${unreadable.join(", ")} in ${unit} is unknown ` +
            `(no declared rate), and an unknown value counts as over the cap of ${cap} ${unit}`,
        };
      }
      if (usedUnknown) {
        return {
          ok: false,
          asset: unit,
          reason: `over the spend cap: spend of unknown value in the last 24 h counts as over the cap of ${cap} ${unit}`,
        };
      }
      const total = addDecimal(used, value);
      if (compareDecimal(total, cap) > 0) {
        return {
          ok: false,
          asset: unit,
          reason:
            `over the spend cap: ${value} ${unit} plus ${used} ${unit} spent or reserved in the last 24 h ` +
            `would be ${total} ${unit}, above the cap of ${cap} ${unit}`,
        };
      }
    }
    return { ok: true };
  }

  const entryOf = (id: string, plan: Plan): LedgerEntry => ({
    id,
    at: now(),
    state: "reserved",
    ...planAmounts(plan),
  });

  return {
    caps,
    spent: async (userKey) => {
      const out: Record<string, string> = {};
      for (const e of live(await store.get<Ledger>(ledgerKey(userKey)))) {
        for (const [asset, amount] of Object.entries(e.amounts))
          out[asset] = addDecimal(out[asset] ?? "0", amount);
      }
      return out;
    },
    setCap: async (userKey, asset, amount) => {
      const name = normaliseAsset(asset);
      await updateAtomically<Record<string, string>, null>(store, capKey(userKey), (current) => {
        const next = { ...current };
        if (amount === null) delete next[name];
        else next[name] = toDecimal(amount);
        return { next, result: null };
      });
    },
    check: async (userKey, plan) => {
      const limits = await caps(userKey);
      if (Object.keys(limits).length === 0) return { ok: true };
      return judge(limits, live(await store.get<Ledger>(ledgerKey(userKey))), entryOf("check", plan));
    },
    reserve: async (userKey, id, plan) => {
      const limits = await caps(userKey);
      const wanted = entryOf(id, plan);
      const { result } = await updateAtomically<Ledger, CapCheck>(store, ledgerKey(userKey), (current) => {
        const entries = live(current).filter((e) => e.id !== id);
        const verdict = judge(limits, entries, wanted);
        if (!verdict.ok) return { result: verdict };
        return { next: { entries: [...entries, wanted] }, result: verdict };
      });
      return result;
    },
    settle: async (userKey, id, ran) => {
      await updateAtomically<Ledger, null>(store, ledgerKey(userKey), (current) => {
        const entries = live(current);
        const mine = entries.find((e) => e.id === id);
        if (!mine) return { result: null };
        const rest = entries.filter((e) => e.id !== id);
        const spent = ran ? planAmounts(ran) : { amounts: {}, unknown: false };
        const nothing = Object.keys(spent.amounts).length === 0 && !spent.unknown;
        return {
          next: { entries: nothing ? rest : [...rest, { ...mine, state: "spent", ...spent }] },
          result: null,
        };
      });
    },
  };
}
