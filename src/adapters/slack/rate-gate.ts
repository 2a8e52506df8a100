/**
 * The one place Slack calls wait for room. Every Web API call Neo makes goes through a gate keyed by
 * method and scope (workspace or channel): calls run in order per key, never more than the rule
 * allows in any window (counted from each answer, so latency cannot squeeze calls together), and a 429 blocks that key for its `Retry-After` and runs the call again —
 * nothing is dropped and nobody else sleeps or retries. A call marked skippable (a status edit that
 * a newer one replaced, a status for an answer that already landed) is dropped without spending room.
 */
import { webApi } from "@slack/bolt";
import { log } from "../../core/log.js";
import { metrics } from "../../ops/metrics.js";

/** At most `limit` calls in any `windowMs`. */
export interface RateRule {
  limit: number;
  windowMs: number;
}

export interface GateCall<T> {
  key: string;
  rule: RateRule;
  call: () => Promise<T>;
  /** Checked when the call reaches the front of its queue; true = drop it unsent. */
  skip?: () => boolean;
}

export interface RateGate {
  /** Resolves with the call's result, or `undefined` when it was skipped. */
  run<T>(call: GateCall<T>): Promise<T | undefined>;
  /** Calls queued or in flight, across keys. */
  pending(): number;
  /** Resolves once no call is queued or in flight (follow-ups of the last one included). */
  drained(): Promise<void>;
}

export class RateGateError extends Error {
  readonly code = "SLACK_RATE_LIMITED";
}

interface KeyState {
  sent: number[];
  tail: Promise<unknown>;
  blockedUntil: number;
}

function retryAfterMs(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { code?: unknown; retryAfter?: unknown };
  if (e.code !== webApi.ErrorCode.RateLimitedError || typeof e.retryAfter !== "number") return undefined;
  return Math.max(e.retryAfter, 0) * 1000;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface RateGateOptions {
  /** How many 429s one call waits out before failing loudly (default 6). */
  maxRateLimitWaits?: number;
  /** Extra fraction of each window kept free, so clock skew never lets a call in early (default 0.1). */
  margin?: number;
}

export function createRateGate(options: RateGateOptions = {}): RateGate {
  const maxWaits = options.maxRateLimitWaits ?? 6;
  const margin = options.margin ?? 0.1;
  const keys = new Map<string, KeyState>();
  let pending = 0;
  let onDrained: (() => void)[] = [];

  const state = (key: string): KeyState => {
    let s = keys.get(key);
    if (!s) {
      s = { sent: [], tail: Promise.resolve(), blockedUntil: 0 };
      keys.set(key, s);
    }
    return s;
  };

  /** Wait until the key may send, then record the send. */
  const admit = async (s: KeyState, rule: RateRule): Promise<void> => {
    const windowMs = Math.ceil(rule.windowMs * (1 + margin));
    for (;;) {
      const now = Date.now();
      s.sent = s.sent.filter((t) => t > now - windowMs);
      const blocked = s.blockedUntil - now;
      if (blocked > 0) {
        await wait(blocked);
        continue;
      }
      if (s.sent.length < rule.limit) {
        s.sent.push(now);
        return;
      }
      await wait(s.sent[0]! + windowMs - now + 1);
    }
  };

  const execute = async <T>(s: KeyState, c: GateCall<T>): Promise<T | undefined> => {
    for (let waits = 0; ; waits++) {
      if (c.skip?.()) return undefined;
      await admit(s, c.rule);
      const slot = s.sent.length - 1;
      try {
        return await c.call();
      } catch (err) {
        const after = retryAfterMs(err);
        if (after === undefined) throw err;
        metrics.rateLimited.inc({ platform: "slack" });
        if (waits >= maxWaits) {
          throw new RateGateError(`${c.key}: still rate limited after ${waits} waits`, { cause: err });
        }
        log.warn({ key: c.key, retryAfterMs: after }, "slack 429: waiting it out");
        s.blockedUntil = Math.max(s.blockedUntil, Date.now() + after);
      } finally {
        // Count the call from when its answer came back: Slack saw it no later than that, so the
        // next call (FIFO per key) can never land inside this one's window, whatever the latency.
        if (s.sent[slot] !== undefined) s.sent[slot] = Date.now();
      }
    }
  };

  return {
    run: <T>(c: GateCall<T>) => {
      const s = state(c.key);
      pending++;
      const result = s.tail.then(() => execute(s, c));
      s.tail = result.then(
        () => undefined,
        () => undefined,
      );
      return result.finally(() => {
        pending--;
        if (pending > 0) return;
        const waiting = onDrained;
        onDrained = [];
        for (const resolve of waiting) resolve();
      });
    },
    pending: () => pending,
    drained: async () => {
      // A finished call's follow-up (a status removal after its answer) is queued in the same tick:
      // look again after it before calling the gate drained.
      do {
        if (pending > 0) await new Promise<void>((resolve) => onDrained.push(resolve));
        await new Promise((resolve) => setImmediate(resolve));
      } while (pending > 0);
    },
  };
}
