/**
 * What Neo knows of a workspace's channels or users, kept in the store: shared by every instance
 * and kept across restarts. It is learned from events that say it (a message's `channel_type`, a
 * rename, a conversion, `user_change`), from a Web API lookup, and again in the background once an
 * entry is old. An answer never waits for room: `now` answers what the store holds (perhaps
 * nothing) and queues what is missing or old; asked to (a name the model would otherwise read as
 * an id), it asks Slack at once only if the gate has room this instant. The queue is worked in the
 * background, one lookup at a time, each an optional call (rate-gate.ts: sent only when its method
 * has room, so it never takes room from anything else), for the next turn. `get` asks Slack and
 * waits for room, as a decision on rights (admin) must.
 */
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import { updateAtomically } from "../../store/update.js";

/** One stored entry: what is known, and when Slack said it (ms since the epoch). */
export interface DirectoryEntry<T> {
  value: Partial<T>;
  at: number;
}

export interface DirectoryOptions<T> {
  store: Store;
  /** The store key of `id` (built with core/keys.ts helpers). */
  key(id: string): string;
  /** Ask Slack. `optional`: only if the gate has room now; undefined when it had none. */
  fetch(id: string, optional: boolean): Promise<T | undefined>;
  /**
   * The entry to keep when `value`, said at `at`, arrives on `current` (undefined: keep current).
   * Default: the newer news wins, field by field.
   */
  merge?(
    current: DirectoryEntry<T> | undefined,
    value: Partial<T>,
    at: number,
  ): DirectoryEntry<T> | undefined;
  /** Everything a lookup says is there (an entry learned from events may hold part of it). */
  complete(value: Partial<T>): boolean;
  /** Between background attempts that found no room (the rule's spacing: window / limit). */
  retryMs: number;
  /** Older than this, an entry is still used, and asked again in the background. */
  staleMs: number;
  /** How long an entry is kept in the store. */
  ttlMs: number;
  /** What is looked up, for the log ("conversations.info"). */
  method: string;
}

export interface Directory<T> {
  /**
   * What the store holds of `id`; asked of Slack in the background when missing, not `enough`, or
   * old. `ask`: when not enough, asked of Slack at once if its method has room this instant (an
   * optional call: it never waits for room), else in the background.
   */
  now(id: string, enough: (value: Partial<T>) => boolean, ask?: boolean): Promise<Partial<T> | undefined>;
  /** The whole of `id`, asked of Slack (waiting for room) unless learned within `maxAgeMs`. */
  get(id: string, maxAgeMs: number): Promise<T>;
  /** Learn from an event what Slack said at `at`. */
  learn(id: string, value: Partial<T>, at: number): Promise<void>;
  /** Look `id` up in the background (at once when its entry is missing or old). */
  refresh(id: string): void;
  forget(id: string): Promise<void>;
  /** Stop the background lookups (shutdown, uninstall). */
  stop(): void;
}

/** How long a failed lookup (`channel_not_found`, `user_not_found`) is not asked again, per instance. */
export const FAILED_LOOKUP_TTL_MS = 60_000;
/** Background lookups waiting at most, per workspace and kind (the oldest gives way). */
const MAX_QUEUED = 5000;
/**
 * A background lookup queued with what the store held a moment ago starts from that, not from a
 * new read, when it starts within this long (at worst a lookup another instance just made is made
 * again: every write is a compare-and-set on the stored entry).
 */
const SEEN_FRESH_MS = 1000;

const dlog = log.child({ component: "slack" });

export function newerWins<T>(
  current: DirectoryEntry<T> | undefined,
  value: Partial<T>,
  at: number,
): DirectoryEntry<T> | undefined {
  if (current && current.at > at) return undefined;
  return { value: { ...current?.value, ...value }, at };
}

export function createDirectory<T extends object>(o: DirectoryOptions<T>): Directory<T> {
  const merge = o.merge ?? newerWins;
  const failedUntil = new Map<string, number>();
  const inflight = new Map<string, Promise<DirectoryEntry<T> | undefined>>();
  const queue = new Set<string>();
  /** What `now` read of a queued id, and when (`SEEN_FRESH_MS`). */
  const seen = new Map<string, { entry: DirectoryEntry<T> | undefined; at: number }>();
  let pumping = false;
  let stopped = false;
  let pause: { timer: NodeJS.Timeout; done: () => void } | undefined;

  const read = (id: string) => o.store.get<DirectoryEntry<T>>(o.key(id));

  /** `known`: the entry read just before (the write starts from it: one command fewer). */
  const write = async (
    id: string,
    value: Partial<T>,
    at: number,
    known?: { value: DirectoryEntry<T> | undefined },
  ): Promise<DirectoryEntry<T> | undefined> => {
    const r = await updateAtomically<DirectoryEntry<T>, null>(
      o.store,
      o.key(id),
      (current) => ({ next: merge(current, value, at), result: null }),
      known ? { ttlMs: o.ttlMs, known } : { ttlMs: o.ttlMs },
    );
    return r.value;
  };

  const failedRecently = (id: string): boolean => {
    const until = failedUntil.get(id);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    failedUntil.delete(id);
    return false;
  };

  /** One lookup of `id` at a time on this instance; undefined when an optional one found no room. */
  const lookup = (
    id: string,
    optional: boolean,
    known?: { value: DirectoryEntry<T> | undefined },
  ): Promise<DirectoryEntry<T> | undefined> => {
    const running = inflight.get(id);
    if (running) return running;
    // Dated from the question: news of a change Slack sent while it was asked is not overwritten.
    const asked = Date.now();
    const p = o
      .fetch(id, optional)
      .then(async (value) => {
        if (value === undefined || stopped) return undefined;
        failedUntil.delete(id);
        return write(id, value, asked, known);
      })
      .catch((err: unknown) => {
        if (failedUntil.size >= MAX_QUEUED) failedUntil.delete(failedUntil.keys().next().value as string);
        failedUntil.set(id, Date.now() + FAILED_LOOKUP_TTL_MS);
        throw err;
      })
      .finally(() => inflight.delete(id));
    inflight.set(id, p);
    return p;
  };

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        pause = undefined;
        resolve();
      }, ms);
      timer.unref();
      pause = { timer, done: resolve };
    });

  /** The background lookups, one at a time, each as an optional call: they never take anyone's room. */
  const pump = async (): Promise<void> => {
    pumping = true;
    try {
      while (!stopped && queue.size > 0) {
        const id = queue.values().next().value as string;
        try {
          // Another instance (or an event) may have learned it meanwhile: read again unless `now`
          // read it a moment ago.
          const hint = seen.get(id);
          seen.delete(id);
          const known = hint && Date.now() - hint.at < SEEN_FRESH_MS ? hint.entry : await read(id);
          if ((known && o.complete(known.value) && Date.now() - known.at < o.staleMs) || failedRecently(id)) {
            queue.delete(id);
            continue;
          }
          if (await lookup(id, true, { value: known })) queue.delete(id);
          else if (!stopped) await wait(o.retryMs); // no room yet: the same one again after a while
        } catch (err) {
          queue.delete(id);
          dlog.warn(
            { err, id, method: o.method },
            "background lookup failed; asked again in a minute at the earliest",
          );
        }
      }
    } finally {
      pumping = false;
    }
  };

  /** `entry`: what the store held of `id` just now (read by the caller). */
  const refresh = (id: string, entry?: { value: DirectoryEntry<T> | undefined }): void => {
    if (stopped) return;
    queue.delete(id);
    if (queue.size >= MAX_QUEUED) {
      const oldest = queue.values().next().value as string;
      queue.delete(oldest);
      seen.delete(oldest);
    }
    queue.add(id);
    if (entry) seen.set(id, { entry: entry.value, at: Date.now() });
    else seen.delete(id);
    if (!pumping) void pump();
  };

  return {
    async now(id, enough, ask = false) {
      const known = await read(id);
      const fresh = known !== undefined && Date.now() - known.at < o.staleMs;
      if (known && enough(known.value)) {
        if (!fresh) refresh(id, { value: known });
        return known.value;
      }
      if (ask && !failedRecently(id)) {
        try {
          const got = await lookup(id, true, { value: known });
          if (got) return got.value;
        } catch (err) {
          dlog.warn({ err, id, method: o.method }, "lookup failed; what the event says (or the id) stands");
          return known?.value;
        }
      }
      refresh(id, { value: known });
      return known?.value;
    },
    async get(id, maxAgeMs) {
      const known = await read(id);
      if (known && o.complete(known.value) && Date.now() - known.at < maxAgeMs) return known.value as T;
      // An optional lookup already in flight may come back empty (no room): then ask, waiting.
      const got = (await lookup(id, false, { value: known })) ?? (await lookup(id, false));
      if (!got) throw new Error(`${o.method} ${id}: no answer`);
      return got.value as T;
    },
    async learn(id, value, at) {
      await write(id, value, at);
    },
    refresh: (id) => refresh(id),
    async forget(id) {
      queue.delete(id);
      seen.delete(id);
      await o.store.delete(o.key(id));
    },
    stop() {
      stopped = true;
      queue.clear();
      seen.clear();
      if (pause) {
        clearTimeout(pause.timer);
        pause.done();
      }
    },
  };
}
