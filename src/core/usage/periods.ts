/** UTC calendar periods the usage counts and budgets are kept in. */
const DAY_MS = 86_400_000;

/** The last day formatted: every model call is counted under today and this month. */
let memo = { day: Number.NaN, iso: "" };

/** `2026-11-23T…`, for the UTC day holding `at` (a bad `at` throws, as toISOString does). */
function isoDay(at: number): string {
  const day = Math.floor(at / DAY_MS);
  if (day !== memo.day) memo = { day, iso: new Date(day * DAY_MS).toISOString() };
  return memo.iso;
}

/** `2026-11-23` for the UTC day holding `at`. */
export const utcDay = (at: number): string => isoDay(at).slice(0, 10);
/** `2026-11` for the UTC month holding `at`. */
export const utcMonth = (at: number): string => isoDay(at).slice(0, 7);
/** Epoch ms of the UTC midnight after `at`. */
export const nextUtcMidnight = (at: number): number => (Math.floor(at / DAY_MS) + 1) * DAY_MS;
/** The UTC day `days` days before `at`'s. */
export const daysBefore = (at: number, days: number): string => utcDay(at - days * DAY_MS);
/** The UTC month `months` months before `at`'s. */
export function monthsBefore(at: number, months: number): string {
  const d = new Date(at);
  return utcMonth(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - months, 1));
}
