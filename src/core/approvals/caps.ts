/**
 * Per-user spend caps, per asset, over a rolling 24 h window. Admins set them; they are checked
 * before an approval is offered (and again just before execution), and spend is counted when a plan
 * executes. Decimal strings throughout; a user with no cap for an asset is not limited on it.
 */
import type { Store } from "../../store/types.js";
import type { UserKey } from "../keys.js";
import { addDecimal, compareDecimal, sumDecimal, toDecimal } from "./decimal.js";
import { normaliseAsset } from "./spend.js";
import type { Plan } from "./types.js";

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface SpentEntry {
  at: number;
  asset: string;
  amount: string;
  planId: string;
}

export type CapCheck = { ok: true } | { ok: false; asset: string; reason: string };

export interface SpendCaps {
  /** Set (or with `null`, lift) a user's cap on one asset. */
  setCap(userKey: UserKey, asset: string, amount: string | null, by: UserKey): Promise<void>;
  caps(userKey: UserKey): Promise<Record<string, string>>;
  /** What the user spent per asset in the window ending now. */
  spent(userKey: UserKey): Promise<Record<string, string>>;
  /** Would this plan, added to the window's spend, stay within every cap? */
  check(userKey: UserKey, plan: Plan): Promise<CapCheck>;
  /** Count an executed plan's spend. */
  record(userKey: UserKey, plan: Plan): Promise<void>;
}

/** Spend per asset of one plan. */
export function planSpend(plan: Plan): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of plan.actions) {
    if (a.spend) out[a.spend.asset] = addDecimal(out[a.spend.asset] ?? "0", a.spend.amount);
  }
  return out;
}

/** The cap key that applies to every asset without a cap of its own. */
export const ANY_ASSET = "*";

export function createSpendCaps(opts: { store: Store; windowMs?: number; now?: () => number }): SpendCaps {
  const { store } = opts;
  const windowMs = opts.windowMs ?? DAY_MS;
  const now = opts.now ?? Date.now;
  const capKey = (u: UserKey) => `caps:limit:${u}`;
  const spentKey = (u: UserKey) => `caps:spent:${u}`;

  async function spent(userKey: UserKey): Promise<Record<string, string>> {
    const since = now() - windowMs;
    const entries = (await store.range<SpentEntry>(spentKey(userKey), 0, -1)).filter((e) => e.at > since);
    const out: Record<string, string> = {};
    for (const e of entries) out[e.asset] = sumDecimal([out[e.asset] ?? "0", e.amount]);
    return out;
  }

  async function caps(userKey: UserKey): Promise<Record<string, string>> {
    return (await store.get<Record<string, string>>(capKey(userKey))) ?? {};
  }

  return {
    caps,
    spent,
    setCap: async (userKey, asset, amount) => {
      const current = await caps(userKey);
      const name = normaliseAsset(asset);
      if (amount === null) delete current[name];
      else current[name] = toDecimal(amount);
      await store.set(capKey(userKey), current);
    },
    check: async (userKey, plan) => {
      const limits = await caps(userKey);
      const wanted = planSpend(plan);
      // A cap set without naming an asset (`/neo limit @u 100`) caps every asset that has no cap of its own.
      const capOf = (asset: string): string | undefined => limits[asset] ?? limits[ANY_ASSET];
      if (Object.keys(wanted).every((asset) => capOf(asset) === undefined)) return { ok: true };
      const already = await spent(userKey);
      for (const [asset, amount] of Object.entries(wanted)) {
        const cap = capOf(asset);
        if (cap === undefined) continue;
        const used = already[asset] ?? "0";
        const total = addDecimal(used, amount);
        if (compareDecimal(total, cap) > 0) {
          return {
            ok: false,
            asset,
            reason:
              `over the spend cap: ${amount} ${asset} plus ${used} ${asset} spent in the last 24 h ` +
              `would be ${total} ${asset}, above the cap of ${cap} ${asset}`,
          };
        }
      }
      return { ok: true };
    },
    record: async (userKey, plan) => {
      const at = now();
      const entries = Object.entries(planSpend(plan)).map(([asset, amount]) => ({
        at,
        asset,
        amount,
        planId: plan.id,
      }));
      if (entries.length > 0) await store.append<SpentEntry>(spentKey(userKey), entries);
    },
  };
}
