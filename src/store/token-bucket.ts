/**
 * A token bucket per user (`Store.takeToken`): `burst` tokens at most, refilled at `perMinute`
 * tokens a minute, one token per turn started. Kept in the store, so every instance spends one
 * bucket per user and a user gets the same rate with 1 or N instances.
 *
 * This file is the arithmetic as pure functions over one key's state, used by the file store; the
 * Redis store runs the same steps as one Lua script on one key (redis-scripts.ts, TAKE_TOKEN).
 */

export interface BucketLimits {
  /** Turns a user may start per minute, sustained. */
  perMinute: number;
  /** Turns a user may start at once, from a full bucket. */
  burst: number;
}

export interface BucketState {
  tokens: number;
  /** When `tokens` was last refilled. */
  at: number;
}

function refill(s: BucketState, limits: BucketLimits, now: number): void {
  if (now > s.at) {
    s.tokens = Math.min(limits.burst, s.tokens + ((now - s.at) * limits.perMinute) / 60_000);
    s.at = now;
  }
}

/** Take one token at `now`: 0 when taken (mutates `s`), else the ms until one is there. */
export function takeToken(s: BucketState, limits: BucketLimits, now: number): number {
  refill(s, limits, now);
  if (s.tokens >= 1) {
    s.tokens -= 1;
    return 0;
  }
  return Math.max(1, Math.ceil(((1 - s.tokens) * 60_000) / limits.perMinute));
}

/** Give back one token taken at or before `now` (mutates `s`): never above `burst`. */
export function returnToken(s: BucketState, limits: BucketLimits, now: number): void {
  refill(s, limits, now);
  s.tokens = Math.min(limits.burst, s.tokens + 1);
}

/** Full again: nothing a fresh bucket would not also say (the key can be forgotten). */
export function isFull(s: BucketState, limits: BucketLimits, now: number): boolean {
  refill(s, limits, now);
  return s.tokens >= limits.burst;
}

/** Buckets sweep their full ones once this many are held (then twice what a sweep left). */
const SWEEP_AT = 1000;

export interface TokenBuckets {
  take(key: string, limits: BucketLimits): number;
  giveBack(key: string, limits: BucketLimits): void;
}

/** Buckets held in memory, for one process (the file store). */
export function createTokenBuckets(clock: () => number = Date.now): TokenBuckets {
  const buckets = new Map<string, { s: BucketState; limits: BucketLimits }>();
  let sweepAt = SWEEP_AT;
  const bucket = (key: string, limits: BucketLimits, now: number): BucketState => {
    let b = buckets.get(key);
    if (!b) {
      if (buckets.size >= sweepAt) {
        for (const [k, x] of buckets) if (isFull(x.s, x.limits, now)) buckets.delete(k);
        sweepAt = Math.max(SWEEP_AT, 2 * buckets.size);
      }
      b = { s: { tokens: limits.burst, at: now }, limits };
      buckets.set(key, b);
    }
    b.limits = limits;
    return b.s;
  };
  return {
    take(key, limits) {
      const now = clock();
      return takeToken(bucket(key, limits, now), limits, now);
    },
    giveBack(key, limits) {
      const now = clock();
      returnToken(bucket(key, limits, now), limits, now);
    },
  };
}
