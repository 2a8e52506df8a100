/**
 * Read what a planned call would spend from its arguments: the amount (amount/value/quantity), the
 * asset (asset/token/currency/symbol, or the token sold in a swap) and the recipient
 * (recipient/to/address/destination). Pure; amounts become canonical decimal strings.
 */
import { toDecimal } from "./decimal.js";
import type { Spend } from "./types.js";

const AMOUNT_KEYS = ["amount", "value", "quantity", "qty", "amountin", "sellamount", "fromamount"];
const ASSET_KEYS = ["asset", "token", "currency", "symbol", "fromtoken", "tokenin", "fromasset", "selltoken"];
const RECIPIENT_KEYS = ["recipient", "to", "address", "destination", "toaddress"];

/** When no asset is named the spend is still shown and capped under this label. */
export const UNSPECIFIED_ASSET = "UNSPECIFIED";

function norm(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, "");
}

function pick(args: Record<string, unknown>, keys: readonly string[]): unknown {
  const byNorm = new Map(Object.entries(args).map(([k, v]) => [norm(k), v]));
  for (const k of keys) {
    const v = byNorm.get(k);
    if (v !== undefined && v !== null && v !== "") return v;
  }
  return undefined;
}

/** Normalise an asset name so caps compare "usdc" and "USDC" as one asset. */
export function normaliseAsset(asset: string): string {
  return asset.trim().toUpperCase();
}

/**
 * A tool's declared spend rule (`NEO_SPEND_RULES`): which argument is the amount, which the asset
 * (or the one asset the tool always spends) and which the recipient.
 */
export interface SpendRule {
  amount: string;
  asset?: string;
  fixedAsset?: string;
  recipient?: string;
}

/** Declared rules by advertised tool name; tools without one are read by argument names. */
export type SpendRules = Record<string, SpendRule>;

function byRule(args: Record<string, unknown>, rule: SpendRule): Spend | null {
  const amount = args[rule.amount];
  if (amount === undefined || amount === null || amount === "") return null;
  const asset = rule.fixedAsset ?? (rule.asset === undefined ? undefined : args[rule.asset]);
  const recipient = rule.recipient === undefined ? undefined : args[rule.recipient];
  return {
    amount: toDecimal(amount),
    asset: typeof asset === "string" && asset.trim() ? normaliseAsset(asset) : UNSPECIFIED_ASSET,
    recipient: typeof recipient === "string" ? recipient : null,
  };
}

/**
 * The spend of one call of `tool`, by its declared rule or else by argument names; null when no
 * amount is named. Throws `DecimalError` when an amount is present but is not a non-negative
 * decimal (the plan is refused, not guessed at).
 */
export function extractSpend(args: Record<string, unknown>, rule?: SpendRule): Spend | null {
  if (rule) return byRule(args, rule);
  const amount = pick(args, AMOUNT_KEYS);
  if (amount === undefined) return null;
  const asset = pick(args, ASSET_KEYS);
  const recipient = pick(args, RECIPIENT_KEYS);
  return {
    amount: toDecimal(amount),
    asset: typeof asset === "string" ? normaliseAsset(asset) : UNSPECIFIED_ASSET,
    recipient: typeof recipient === "string" ? recipient : null,
  };
}

/** "transfer 5 USDC to 0xabc" style line for one spend. */
export function describeSpend(spend: Spend): string {
  return spend.recipient
    ? `${spend.amount} ${spend.asset} to ${spend.recipient}`
    : `${spend.amount} ${spend.asset}`;
}
