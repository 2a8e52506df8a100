/**
 * The fleet's side of a gate key: every instance on one store spends one window per key
 * (Store.rateWindow, one awaited round trip per call), so N instances send what one may, and a
 * 429 seen by one holds the key for all. The gate (rate-gate.ts) still orders its own calls, keeps
 * reservations and lets cosmetic calls give way in its process; this is the count they all share.
 * A call's room is held while it is in flight and counted from its answer (settled off the
 * answer's path), as the gate counts its own. Without a store (a gate made alone) the window is
 * this process's, in memory.
 */
import { rateBudgetKey } from "../../../core/keys.js";
import { log } from "../../../core/log.js";
import { createRateWindows } from "../../../store/rate-window.js";
import type { Store } from "../../../store/types.js";
import type { RateRule } from "./key-state.js";

/** The longest a call waiting for the fleet's room sleeps before asking again: calls in flight are
 * held to their timeout in the answer it gets, and their answers free room far sooner. */
const POLL_MS = 200;
/** How long a call in flight holds its room at most (the Web API client's timeout and retries). */
const FLIGHT_MS = 60_000;
/** How long room taken `ahead` waits for its call (an answer's log write takes milliseconds). */
const AHEAD_MS = 5_000;

export interface FleetWindow {
  /**
   * Room for one call of `key` in the fleet's window: a required call waits for it; an optional one
   * asks once (and yields to required calls waiting anywhere). The id to settle, or undefined when
   * an optional call found none.
   */
  take(key: string, rule: RateRule, optional: boolean): Promise<string | undefined>;
  /**
   * A required call of `key` is about to go (an answer being logged before it is posted): ask for
   * its room now, once, as an optional call would (never ahead of calls waiting anywhere), so that
   * call's `take` costs no round trip of its own. Room got and not used within `AHEAD_MS` is
   * settled, counted as a call.
   */
  ahead(key: string, rule: RateRule): void;
  /** The call answered: it counts from now. */
  settle(key: string, rule: RateRule, id: string): void;
  /** A 429: the key is held for every instance for `ms`. */
  block(key: string, rule: RateRule, ms: number): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createFleetWindow(o: { store?: Pick<Store, "rateWindow">; margin: number }): FleetWindow {
  const local = createRateWindows();
  const rateWindow = o.store
    ? (key: string, op: Parameters<Store["rateWindow"]>[1]) => o.store!.rateWindow(key, op)
    : async (key: string, op: Parameters<Store["rateWindow"]>[1]) => local(key, op);
  const storeKey = (key: string) => rateBudgetKey("slack", ...key.split(":"));
  const windowOf = (rule: RateRule) => ({
    limit: rule.limit,
    windowMs: Math.ceil(rule.windowMs * (1 + o.margin)),
  });
  let seq = 0;
  const prefix = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  /** Room asked for ahead of a key's next required call: the id, or undefined if there was none. */
  const early = new Map<string, Promise<string | undefined>>();
  const settle = (key: string, rule: RateRule, id: string): void => {
    rateWindow(storeKey(key), { op: "settle", id, windowMs: windowOf(rule).windowMs }).catch(
      (err: unknown) => {
        // The call keeps counting until its hold ends: the fleet errs towards sending less.
        log.warn({ key, err: (err as Error).message }, "slack gate: a call's answer was not recorded");
      },
    );
  };
  const takeNew = async (key: string, rule: RateRule, optional: boolean): Promise<string | undefined> => {
    const id = `${prefix}-${++seq}`;
    for (;;) {
      const wait = await rateWindow(storeKey(key), {
        op: "take",
        id,
        ...windowOf(rule),
        holdMs: FLIGHT_MS,
        yields: optional,
      });
      if (wait === 0) return id;
      if (optional) return undefined;
      await sleep(Math.min(wait, POLL_MS));
    }
  };
  return {
    take: async (key, rule, optional) => {
      const got = optional ? undefined : early.get(key);
      if (got) {
        early.delete(key);
        const id = await got.catch(() => undefined);
        if (id !== undefined) return id;
      }
      return takeNew(key, rule, optional);
    },
    ahead: (key, rule) => {
      if (early.has(key)) return;
      const got = takeNew(key, rule, true);
      early.set(key, got);
      got.then(
        (id) => {
          if (id === undefined) {
            if (early.get(key) === got) early.delete(key);
            return;
          }
          setTimeout(() => {
            if (early.get(key) !== got) return;
            early.delete(key);
            settle(key, rule, id);
          }, AHEAD_MS).unref();
        },
        (err: unknown) => {
          if (early.get(key) === got) early.delete(key);
          log.warn({ key, err: (err as Error).message }, "slack gate: room asked ahead was not got");
        },
      );
    },
    settle,
    block: async (key, rule, ms) => {
      await rateWindow(storeKey(key), { op: "block", ms, windowMs: windowOf(rule).windowMs });
    },
  };
}
