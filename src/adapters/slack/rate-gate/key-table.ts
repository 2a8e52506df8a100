/**
 * The gate's keys and their states, forgetting idle ones once many are held. Keys carry channel
 * ids, so a process that posts in ever more channels would otherwise hold one state per channel it
 * ever wrote to.
 */
import { isIdle, type KeyState, newKeyState, type RateRule } from "./key-state.js";

/** Keys held before idle ones are forgotten. */
const SWEEP_AT = 1000;

export interface KeyTable {
  /** The key's state, made with `rule` if the key is not held. */
  state(key: string, rule: RateRule): KeyState;
  /** Every key held, with its state. */
  entries(): IterableIterator<[string, KeyState]>;
}

export function createKeyTable(margin: number): KeyTable {
  const keys = new Map<string, KeyState>();
  /** Sweep when this many keys are held: twice what a sweep left, so sweeps stay rare (amortised). */
  let sweepAt = SWEEP_AT;

  /**
   * Drop keys a fresh state would replace exactly. A reservation whose key was forgotten had
   * lapsed: the gate's `spend` says so, and its call waits for room.
   */
  const forgetIdle = (now: number): void => {
    for (const [key, s] of keys) if (isIdle(s, now)) keys.delete(key);
  };

  return {
    state: (key, rule) => {
      let s = keys.get(key);
      if (!s) {
        if (keys.size >= sweepAt) {
          forgetIdle(Date.now());
          sweepAt = Math.max(SWEEP_AT, 2 * keys.size);
        }
        s = newKeyState(rule, margin);
        keys.set(key, s);
      }
      return s;
    },
    entries: () => keys.entries(),
  };
}
