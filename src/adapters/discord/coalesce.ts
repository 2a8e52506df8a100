/**
 * Edit coalescing: for each target, at most one job is in flight and only the newest pending job
 * runs next, no sooner than `minIntervalMs` per platform call of the previous job after it ended
 * (a job that made two calls waits twice as long, so a channel's 5-per-5 s stays unreached even
 * when slow responses bunch the calls up). That cadence is for one answer being written: once it is
 * finished (`rest`), the next job (the next answer) waits only for room in the channel's window,
 * never for the previous answer's edit pacing.
 * Merging happens here, before anything enters discord.js's REST queue (which then owns 429s;
 * nobody else sleeps or retries).
 */
import { log } from "../../core/log.js";

/** Brings a target up to date; resolves with how many platform calls it made. */
export type PacedJob = () => Promise<number>;

export interface Pacer {
  /** Replace whatever job is pending for `key`; it runs when the slot frees up. */
  push(key: string, job: PacedJob): void;
  /**
   * Run `job` in its turn for `key`, never merged away (a file upload is not replaced by an edit);
   * resolves or rejects as the job does. Runs before a pending `push` job.
   */
  send(key: string, job: PacedJob): Promise<void>;
  /** Drop anything pending for `key` and wait for an in-flight job to finish. */
  cancel(key: string): Promise<void>;
  /** Wait until nothing is pending or in flight for `key`. */
  settle(key: string): Promise<void>;
  /**
   * What runs for `key` so far is finished (an answer landed): the next job starts as soon as the
   * channel's window has room, not one interval after the last job.
   */
  rest(key: string): void;
}

export interface EditCoalescer {
  /** Replace whatever is pending for `key` with `content`; sent when the slot frees up. */
  push(key: string, content: string): void;
  cancel(key: string): Promise<void>;
  settle(key: string): Promise<void>;
}

interface Slot {
  pending: PacedJob | null;
  /** `send` jobs, in order; each runs once. */
  queued: PacedJob[];
  running: Promise<void> | null;
  /** When the previous job ended, and how long after it the next may start. */
  lastAt: number;
  gapMs: number;
  /** The next job starts a new run (`rest`): it waits for the window only. */
  fresh: boolean;
  /** When each recent platform call of this key ended, oldest first (the last `WINDOW_MS`). */
  recent: number[];
}

/** Discord's per-channel message window (5 writes per 5 s)... */
const WINDOW_MS = 5000;
/** ...of which a fresh job may find at most this many taken: one stays for the status line. */
const FRESH_ROOM = 3;

/** How long a fresh job waits for room in the window. */
function windowWait(slot: Slot, now: number): number {
  while (slot.recent.length > 0 && slot.recent[0]! <= now - WINDOW_MS) slot.recent.shift();
  if (slot.recent.length <= FRESH_ROOM) return 0;
  return slot.recent[slot.recent.length - FRESH_ROOM - 1]! + WINDOW_MS - now;
}

export function createPacer(minIntervalMs: number): Pacer {
  const slots = new Map<string, Slot>();

  const run = (key: string, slot: Slot): void => {
    if (slot.running || (slot.pending === null && slot.queued.length === 0)) return;
    slot.running = (async () => {
      const now = Date.now();
      const wait = slot.fresh ? windowWait(slot, now) : slot.lastAt + slot.gapMs - now;
      slot.fresh = false;
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      let job = slot.queued.shift() ?? null;
      if (job === null) {
        job = slot.pending;
        slot.pending = null;
      }
      if (job === null) return;
      const calls = await job().catch((err: unknown) => {
        log.warn({ err, key }, "discord edit failed");
        return 1;
      });
      slot.lastAt = Date.now();
      slot.gapMs = minIntervalMs * Math.max(1, calls);
      for (let i = 0; i < calls; i++) slot.recent.push(slot.lastAt);
    })().finally(() => {
      slot.running = null;
      if (slot.pending !== null || slot.queued.length > 0) run(key, slot);
      // Kept until its gap and its window have passed, so a job pushed after an idle moment still waits.
      else
        setTimeout(
          () => {
            if (!slot.running && slot.pending === null && slot.queued.length === 0 && slots.get(key) === slot)
              slots.delete(key);
          },
          Math.max(slot.fresh ? 0 : slot.gapMs, WINDOW_MS),
        ).unref();
    });
  };

  const slotOf = (key: string): Slot => {
    const slot = slots.get(key) ?? {
      pending: null,
      queued: [],
      running: null,
      lastAt: 0,
      gapMs: 0,
      fresh: false,
      recent: [],
    };
    slots.set(key, slot);
    return slot;
  };

  return {
    push(key, job) {
      const slot = slotOf(key);
      slot.pending = job;
      run(key, slot);
    },
    send(key, job) {
      return new Promise<void>((resolve, reject) => {
        const slot = slotOf(key);
        slot.queued.push(async () => {
          try {
            const calls = await job();
            resolve();
            return calls;
          } catch (err) {
            reject(err);
            return 1;
          }
        });
        run(key, slot);
      });
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
    rest(key) {
      const slot = slots.get(key);
      if (slot) slot.fresh = true;
    },
  };
}

export function createEditCoalescer(
  send: (key: string, content: string) => Promise<void>,
  minIntervalMs: number,
): EditCoalescer {
  const pacer = createPacer(minIntervalMs);
  return {
    push: (key, content) => pacer.push(key, () => send(key, content).then(() => 1)),
    cancel: (key) => pacer.cancel(key),
    settle: (key) => pacer.settle(key),
  };
}
