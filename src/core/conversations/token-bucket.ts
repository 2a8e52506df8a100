/**
 * A token bucket per user: `burst` tokens at most, refilled at `perMinute` tokens a minute, one
 * token per turn started. Pure arithmetic over a clock reading; the scheduler owns the timers.
 */

export interface BucketLimits {
  /** Turns a user may start per minute, sustained. */
  perMinute: number;
  /** Turns a user may start at once, from a full bucket. */
  burst: number;
}

export interface TokenBucket {
  /** Tokens available now (fractional while refilling). */
  level(now: number): number;
  /** Take one token if there is one. */
  take(now: number): boolean;
  /** Milliseconds until one whole token is available (0 = now). */
  waitMs(now: number): number;
  /** True when the bucket is full again (the user is back within their share). */
  full(now: number): boolean;
}

export function createTokenBucket(limits: BucketLimits, now: number): TokenBucket {
  const perMs = limits.perMinute / 60_000;
  let tokens = limits.burst;
  let at = now;
  const refill = (t: number) => {
    if (t > at) {
      tokens = Math.min(limits.burst, tokens + (t - at) * perMs);
      at = t;
    }
  };
  return {
    level(t) {
      refill(t);
      return tokens;
    },
    take(t) {
      refill(t);
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    waitMs(t) {
      refill(t);
      return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / perMs);
    },
    full(t) {
      refill(t);
      return tokens >= limits.burst;
    },
  };
}
