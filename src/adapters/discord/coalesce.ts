/**
 * Edit coalescing: for each target, at most one edit is in flight and only the newest pending
 * content is sent next, no sooner than `minIntervalMs` after the previous one. Merging happens here,
 * before anything enters discord.js's REST queue (which then owns 429s; nobody else sleeps or retries).
 */
import { log } from "../../core/log.js";

export interface EditCoalescer {
  /** Replace whatever is pending for `key` with `content`; sent when the slot frees up. */
  push(key: string, content: string): void;
  /** Drop anything pending for `key` and wait for an in-flight edit to finish. */
  cancel(key: string): Promise<void>;
  /** Wait until nothing is pending or in flight for `key`. */
  settle(key: string): Promise<void>;
}

interface Slot {
  pending: string | null;
  running: Promise<void> | null;
  lastAt: number;
}

export function createEditCoalescer(
  send: (key: string, content: string) => Promise<void>,
  minIntervalMs: number,
): EditCoalescer {
  const slots = new Map<string, Slot>();

  const run = (key: string, slot: Slot): void => {
    if (slot.running || slot.pending === null) return;
    slot.running = (async () => {
      const wait = slot.lastAt + minIntervalMs - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const content = slot.pending;
      slot.pending = null;
      if (content === null) return;
      slot.lastAt = Date.now();
      await send(key, content).catch((err: unknown) => log.warn({ err, key }, "discord edit failed"));
    })().finally(() => {
      slot.running = null;
      if (slot.pending !== null) run(key, slot);
      else slots.delete(key);
    });
  };

  return {
    push(key, content) {
      const slot = slots.get(key) ?? { pending: null, running: null, lastAt: 0 };
      slots.set(key, slot);
      slot.pending = content;
      run(key, slot);
    },
    async cancel(key) {
      const slot = slots.get(key);
      if (!slot) return;
      slot.pending = null;
      await slot.running;
    },
    async settle(key) {
      for (let slot = slots.get(key); slot?.running; slot = slots.get(key)) await slot.running;
    },
  };
}
