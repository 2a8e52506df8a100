/**
 * Decimal-string arithmetic for money: amounts are non-negative decimal strings ("12.5"), added and
 * compared exactly with bigint. Never floats.
 */

export class DecimalError extends Error {
  readonly code = "BAD_DECIMAL";
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Normalise a JSON amount (string or number) to a canonical decimal string, or throw `DecimalError`. */
export function toDecimal(value: unknown): string {
  let text: string;
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0)
      throw new DecimalError(`amount ${value} is not a non-negative number`);
    // Numbers like 1e-7 print in exponent form; expand them without going through float maths again.
    text = /e/i.test(String(value)) ? value.toFixed(20) : String(value);
  } else if (typeof value === "string") {
    text = value.trim();
  } else {
    throw new DecimalError(`amount must be a number or a decimal string (got ${typeof value})`);
  }
  const m = DECIMAL.exec(text);
  if (!m) throw new DecimalError(`amount "${text}" is not a non-negative decimal`);
  const int = m[1]!.replace(/^0+(?=\d)/, "");
  const frac = (m[2] ?? "").replace(/0+$/, "");
  return frac ? `${int}.${frac}` : int;
}

function scaled(a: string, scale: number): bigint {
  const [int, frac = ""] = toDecimal(a).split(".");
  return BigInt(int! + frac.padEnd(scale, "0"));
}

function scaleOf(a: string): number {
  return toDecimal(a).split(".")[1]?.length ?? 0;
}

function fromScaled(n: bigint, scale: number): string {
  if (scale === 0) return n.toString();
  const s = n.toString().padStart(scale + 1, "0");
  return toDecimal(`${s.slice(0, -scale)}.${s.slice(-scale)}`);
}

/** a + b, exactly. */
export function addDecimal(a: string, b: string): string {
  const scale = Math.max(scaleOf(a), scaleOf(b));
  return fromScaled(scaled(a, scale) + scaled(b, scale), scale);
}

/** -1, 0 or 1 as a is below, equal to or above b. */
export function compareDecimal(a: string, b: string): -1 | 0 | 1 {
  const scale = Math.max(scaleOf(a), scaleOf(b));
  const x = scaled(a, scale);
  const y = scaled(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Sum of many amounts ("0" for none). */
export function sumDecimal(values: readonly string[]): string {
  return values.reduce((acc, v) => addDecimal(acc, v), "0");
}

/** a × b, exactly. */
export function mulDecimal(a: string, b: string): string {
  const sa = scaleOf(a);
  const sb = scaleOf(b);
  return fromScaled(scaled(a, sa) * scaled(b, sb), sa + sb);
}
