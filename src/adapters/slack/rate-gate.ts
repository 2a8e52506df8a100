/**
 * The one place Slack calls wait for room. Every Web API call Neo makes goes through a gate keyed by
 * method and scope (workspace or channel), and no key ever exceeds its rule in any window (a call
 * holds its room while in flight and is counted from its answer, so latency cannot squeeze calls
 * together, nor a call that goes at once, optional or reserved, be overtaken). Three kinds of call:
 * - required (an answer, a lookup): queued per key in order, waiting for room; a 429 blocks the key
 *   for its `Retry-After` and the call runs again — nothing is dropped and nobody else sleeps;
 * - reserved: room taken earlier with `reserve` (a posted draft holds the room for the edit that
 *   will make it the answer), spent at once, ahead of the queue, so that call never waits;
 * - optional (a draft edit, a status edit, a reaction): sent only if the key has room now beyond
 *   its reservations and no required call is waiting for room there; else dropped unsent. It never
 *   waits, and never takes room an answer is waiting for or was promised.
 * A call marked skippable (a status edit that a newer one replaced) is dropped without spending room.
 * Reservations and optional calls are refused alike while a key is full, so in a busy workspace
 * cosmetic calls are what gives way (docs/slack.md, "When the workspace is busy").
 * This file schedules calls and keeps reservations; one key's window and state are in
 * rate-gate/key-state.ts, the table of keys in rate-gate/key-table.ts.
 */
import { webApi } from "@slack/bolt";
import { log } from "../../core/log.js";
import { metrics } from "../../ops/metrics.js";
import type { Store } from "../../store/types.js";
import { createFleetWindow } from "./rate-gate/fleet-window.js";
import {
  type Held,
  type KeyState,
  landed,
  type RateRule,
  roomNow,
  type Slot,
  take,
  waitForRoom,
  wakeAll,
} from "./rate-gate/key-state.js";
import { createKeyTable } from "./rate-gate/key-table.js";

/** Room for one call in one key, taken with `reserve`; spent by `run`, or given back. */
export interface Reservation {
  readonly key: string;
  /** Give the room back unspent (idempotent; a no-op once spent). */
  release(): void;
}

export interface GateCall<T> {
  key: string;
  /** The Web API method, for the metrics (keys carry workspace and channel ids). */
  method: string;
  rule: RateRule;
  call: () => Promise<T>;
  /** Checked when the call is about to go; true = drop it unsent. */
  skip?: () => boolean;
  /** Cosmetic: sent only if it can go at once without taking anyone's room; else dropped. */
  optional?: boolean;
  /** Room reserved for this call in its key: it goes at once. */
  reservation?: Reservation;
}

export interface RateGate {
  /** Resolves with the call's result, or `undefined` when it was skipped or (optional) dropped. */
  run<T>(call: GateCall<T>): Promise<T | undefined>;
  /**
   * Take the room of one call in `key` for later, if it is free now (beyond the calls sent in the
   * window and the rooms already reserved) and no required call waits for room there.
   */
  reserve(key: string, method: string, rule: RateRule): Reservation | undefined;
  /**
   * A required call of `key` comes next (an answer is being logged): its room in the fleet's window
   * is asked for now, beside that write, not after it (rate-gate/fleet-window.ts `ahead`).
   */
  ahead(key: string, rule: RateRule): void;
  /** Calls queued or in flight, across keys. */
  pending(): number;
  /**
   * Calls that waited for room or a `Retry-After` at least once, by key (keys with none omitted).
   * Counted while the gate holds the key: an idle key is forgotten, with its count, once many are held.
   */
  waits(): Record<string, number>;
  /** Resolves once no call is queued or in flight (follow-ups of the last one included). */
  drained(): Promise<void>;
}

export class RateGateError extends Error {
  readonly code = "SLACK_RATE_LIMITED";
}

function retryAfterMs(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { code?: unknown; retryAfter?: unknown };
  if (e.code !== webApi.ErrorCode.RateLimitedError || typeof e.retryAfter !== "number") return undefined;
  return Math.max(e.retryAfter, 0) * 1000;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface RateGateOptions {
  /** How many 429s one call waits out before failing loudly (default 6). */
  maxRateLimitWaits?: number;
  /** Extra fraction of each window kept free, so clock skew never lets a call in early (default 0.1). */
  margin?: number;
  /**
   * How long reserved room is held (default 15 min): a reservation its holder never spent nor gave
   * back (a turn that died between) cannot shrink its key for good; a lapsed one's call waits.
   */
  reservationTtlMs?: number;
  /**
   * Where the fleet's windows live (rate-gate/fleet-window.ts): every instance on this store spends
   * one budget per key. Unset, the window is this process's.
   */
  store?: Pick<Store, "rateWindow">;
}

export function createRateGate(options: RateGateOptions = {}): RateGate {
  const maxWaits = options.maxRateLimitWaits ?? 6;
  const margin = options.margin ?? 0.1;
  const reservationTtlMs = options.reservationTtlMs ?? 15 * 60_000;
  const keys = createKeyTable(margin);
  const fleet = createFleetWindow({ store: options.store, margin });
  let pending = 0;
  let onDrained: (() => void)[] = [];

  const countWait = (s: KeyState, c: GateCall<unknown>): void => {
    s.waits++;
    metrics.slackGateWaits.inc({ method: c.method });
  };

  /** A required call: wait until the key may send, then take a slot. */
  const admit = async (s: KeyState, c: GateCall<unknown>): Promise<Slot> => {
    let counted = false;
    try {
      for (;;) {
        const now = Date.now();
        if (roomNow(s, now)) return take(s);
        if (!counted) {
          countWait(s, c);
          counted = true;
          s.held++;
        }
        await waitForRoom(s, now);
      }
    } finally {
      if (counted) s.held--;
    }
  };

  const dropped = (c: GateCall<unknown>): undefined => {
    metrics.slackGateDropped.inc({ method: c.method });
    return undefined;
  };

  /**
   * One attempt, once the fleet has room for it (an optional call without room there is dropped);
   * a 429 blocks the key, here and for the fleet, and says so (`retry`); anything else is the caller's.
   */
  const attempt = async <T>(
    s: KeyState,
    c: GateCall<T>,
    slot: Slot,
  ): Promise<{ ok: true; value: T } | { ok: false; err: unknown } | { ok: "dropped" }> => {
    let id: string | undefined;
    try {
      id = await fleet.take(c.key, c.rule, c.optional === true);
      if (id === undefined) return { ok: "dropped" };
      return { ok: true, value: await c.call() };
    } catch (err) {
      const after = retryAfterMs(err);
      if (after === undefined) throw err;
      metrics.rateLimited.inc({ platform: "slack" });
      s.blockedUntil = Math.max(s.blockedUntil, Date.now() + after);
      log.warn({ key: c.key, retryAfterMs: after }, "slack 429: waiting it out");
      await fleet.block(c.key, c.rule, after);
      return { ok: false, err };
    } finally {
      landed(s, slot);
      if (id !== undefined) fleet.settle(c.key, c.rule, id);
    }
  };

  const execute = async <T>(s: KeyState, c: GateCall<T>): Promise<T | undefined> => {
    let slot: Slot;
    if (c.reservation) {
      const room = c.reservation.key === c.key ? spend(c.reservation) : "none";
      if (room === "none") throw new Error(`${c.key}: a reservation is spent once, in its own key`);
      if (c.skip?.()) {
        wakeAll(s);
        return undefined;
      }
      // A lapsed reservation (held past its time) is an ordinary call again: it waits for room.
      slot = room === "room" ? take(s) : await admit(s, c);
      // Reserved room is ours, but Slack's Retry-After is Slack's: a blocked key is waited out.
      if (s.blockedUntil > Date.now()) {
        countWait(s, c);
        while (s.blockedUntil > Date.now()) await sleep(s.blockedUntil - Date.now());
      }
    } else if (c.optional) {
      if (c.skip?.()) return undefined;
      if (s.held > 0 || !roomNow(s, Date.now())) return dropped(c);
      slot = take(s);
    } else {
      if (c.skip?.()) return undefined;
      slot = await admit(s, c);
    }
    let counted = false;
    for (let waits = 0; ; waits++) {
      const r = await attempt(s, c, slot);
      if (r.ok === "dropped") return dropped(c);
      if (r.ok) return r.value;
      // A cosmetic call is not worth a wait: the key is blocked for the others, this one is dropped.
      if (c.optional) return dropped(c);
      if (waits >= maxWaits) {
        throw new RateGateError(`${c.key}: still rate limited after ${waits + 1} waits`, { cause: r.err });
      }
      if (!counted) countWait(s, c);
      counted = true;
      if (c.skip?.()) return undefined;
      slot = await admit(s, c);
    }
  };

  /** Live reservations: spent or given back once. */
  const live = new WeakMap<Reservation, { s: KeyState; held: Held }>();

  /** End a reservation: its room ("room"), it lapsed meanwhile ("lapsed"), or it had ended ("none"). */
  const spend = (r: Reservation): "room" | "lapsed" | "none" => {
    const l = live.get(r);
    if (!l) return "none";
    live.delete(r);
    return l.s.reserved.delete(l.held) ? "room" : "lapsed";
  };

  const finished = (): void => {
    pending--;
    if (pending > 0) return;
    const waiting = onDrained;
    onDrained = [];
    for (const resolve of waiting) resolve();
  };

  return {
    run: <T>(c: GateCall<T>) => {
      const s = keys.state(c.key, c.rule);
      pending++;
      s.active++;
      let result: Promise<T | undefined>;
      if (c.reservation || c.optional) {
        // Neither waits for room, so neither queues behind calls that do.
        result = execute(s, c);
      } else {
        result = s.tail.then(() => execute(s, c));
        s.tail = result.then(
          () => undefined,
          () => undefined,
        );
      }
      return result.finally(() => {
        s.active--;
        finished();
      });
    },
    reserve: (key, method, rule) => {
      const s = keys.state(key, rule);
      if (s.held > 0 || !roomNow(s, Date.now())) {
        metrics.slackGateRefused.inc({ method });
        return undefined;
      }
      const held = { expiresAt: Date.now() + reservationTtlMs };
      s.reserved.add(held);
      const r: Reservation = {
        key,
        release: () => {
          if (spend(r) === "room") wakeAll(s);
        },
      };
      live.set(r, { s, held });
      return r;
    },
    ahead: (key, rule) => fleet.ahead(key, rule),
    pending: () => pending,
    waits: () =>
      Object.fromEntries([...keys.entries()].flatMap(([key, s]) => (s.waits > 0 ? [[key, s.waits]] : []))),
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
