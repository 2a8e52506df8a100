/**
 * Valuing an amount of one asset in a cap's unit, by a declared conversion table only
 * (`NEO_ASSET_RATES`, `FROM/TO=rate`). No rate, no value: the caller treats that as over the cap
 * (fail closed), never as zero. Pure.
 */
import { mulDecimal } from "./decimal.js";
import { UNSPECIFIED_ASSET } from "./spend.js";

/** `FROM/TO` (upper case) → how many TO one FROM is worth, as a decimal string. */
export type Rates = Record<string, string>;

/** `amount` of `asset` in `unit`, or undefined when no declared rule gives it. */
export function valueIn(unit: string, asset: string, amount: string, rates: Rates): string | undefined {
  if (asset === UNSPECIFIED_ASSET) return undefined;
  if (asset === unit) return amount;
  const rate = rates[`${asset}/${unit}`];
  return rate === undefined ? undefined : mulDecimal(amount, rate);
}
