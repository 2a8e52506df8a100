/**
 * A shared rate window (`Store.rateWindow`): at most `limit` entries count in any `windowMs`, so
 * every process on one store spends one platform budget. An entry is a call (counted from when it
 * was taken) or reserved room (counted until its hold ends). A key also carries a block (a 429's
 * Retry-After: nothing is taken until it ends) and a "wanted" mark (a required call is waiting for
 * room: optional takes yield until it has had its turn).
 *
 * This file is the algorithm as a pure function over one key's state, used by the file store;
 * the Redis store runs the same steps as one Lua script on one key (redis-store.ts, RATE_WINDOW).
 */

/** One operation on a key's window. Every answer is 0 (done) or the ms to wait before asking again. */
export type RateWindowOp =
  /**
   * Take room for one call (`holdMs` unset: counted from now) or reserve it (`holdMs`: counted until
   * then, spent or released before). `yields`: refused while a required call waits for room here
   * (optional calls and reservations); a required take that is refused marks the key wanted.
   */
  | { op: "take"; id: string; limit: number; windowMs: number; holdMs?: number; yields?: boolean }
  /** Spend reserved room `id`: counted from now. Lapsed (or never reserved): a required take. */
  | { op: "spend"; id: string; limit: number; windowMs: number }
  /**
   * The call taken as `id` (with `holdMs` covering its flight) has been answered: it counts from now.
   * Counting a call from its answer means no later call can land inside its window at the platform,
   * whatever the latency. A no-op when `id` is not held.
   */
  | { op: "settle"; id: string; windowMs: number }
  /** Give reserved room `id` back unspent. */
  | { op: "release"; id: string; windowMs: number }
  /** A 429 said wait `ms`: nothing is taken or spent in this key until then, by anyone. */
  | { op: "block"; ms: number; windowMs: number };

export interface RateWindowState {
  /** Entry id → the time it stops counting, minus the window (a call: when it was taken). */
  entries: Map<string, number>;
  blockedUntil: number;
  wantedUntil: number;
  /** The window the key was last used with (what a sweep prunes it by). */
  windowMs: number;
}

export function newRateWindowState(): RateWindowState {
  return { entries: new Map(), blockedUntil: 0, wantedUntil: 0, windowMs: 0 };
}

/** Apply `op` at `now`; mutates `s`. */
export function applyRateWindow(s: RateWindowState, op: RateWindowOp, now: number): number {
  s.windowMs = op.windowMs;
  for (const [id, score] of s.entries) if (score <= now - op.windowMs) s.entries.delete(id);
  switch (op.op) {
    case "release":
      s.entries.delete(op.id);
      return 0;
    case "settle":
      if (s.entries.has(op.id)) s.entries.set(op.id, now);
      return 0;
    case "block":
      s.blockedUntil = Math.max(s.blockedUntil, now + op.ms);
      return 0;
    case "spend":
      if (s.blockedUntil > now) return s.blockedUntil - now;
      if (s.entries.has(op.id)) {
        s.entries.set(op.id, now);
        return 0;
      }
      return take(s, { ...op, op: "take" }, now);
    case "take":
      if (s.blockedUntil > now) return s.blockedUntil - now;
      return take(s, op, now);
  }
}

function take(s: RateWindowState, op: Extract<RateWindowOp, { op: "take" }>, now: number): number {
  if (op.yields && s.wantedUntil > now) return s.wantedUntil - now;
  const scores = [...s.entries.values()].sort((a, b) => a - b);
  if (scores.length < op.limit) {
    s.entries.set(op.id, op.holdMs === undefined ? now : now + op.holdMs - op.windowMs);
    return 0;
  }
  // Room frees when enough of the oldest entries have left the window for one more to fit.
  const frees = scores[scores.length - op.limit] ?? now;
  const wait = Math.max(1, Math.ceil(frees + op.windowMs - now));
  if (!op.yields) s.wantedUntil = Math.max(s.wantedUntil, now + wait + wantedGrace(op));
  return wait;
}

/**
 * How long past the room it waits for a required call keeps the key wanted: long enough for it to
 * come back and take that room before an optional call does.
 */
export function wantedGrace(op: { limit: number; windowMs: number }): number {
  return Math.max(100, Math.ceil(op.windowMs / op.limit));
}

/** Nothing left that a fresh state would not also say (the key can be forgotten). */
export function isSpent(s: RateWindowState, now: number): boolean {
  for (const [id, score] of s.entries) if (score <= now - s.windowMs) s.entries.delete(id);
  return s.entries.size === 0 && s.blockedUntil <= now && s.wantedUntil <= now;
}

/** Keys held before spent ones are forgotten (then twice what a sweep left). */
const SWEEP_AT = 1000;

/** Windows held in memory, for one process (the file store): keys carry channel ids, so spent ones go. */
export function createRateWindows(clock: () => number = Date.now): (key: string, op: RateWindowOp) => number {
  const windows = new Map<string, RateWindowState>();
  let sweepAt = SWEEP_AT;
  return (key, op) => {
    const now = clock();
    let s = windows.get(key);
    if (!s) {
      if (windows.size >= sweepAt) {
        for (const [k, w] of windows) if (isSpent(w, now)) windows.delete(k);
        sweepAt = Math.max(SWEEP_AT, 2 * windows.size);
      }
      s = newRateWindowState();
      windows.set(key, s);
    }
    return applyRateWindow(s, op, now);
  };
}
