/**
 * The one durable store. Everything durable (cortex, transcripts, journal, approvals, audit) goes
 * through it. Two implementations: Redis (`REDIS_URL`) and an embedded file-backed store.
 * Keys are namespaced by the store's prefix; callers pass unprefixed keys. Values are JSON (a
 * value that JSON cannot represent is rejected). Nothing fails open: while the backend is
 * unreachable EVERY operation rejects at once with `StoreUnavailableError` (never a silent
 * `undefined`), and `healthy()` is false until it is reachable again.
 */
import type { RateWindowOp } from "./rate-window.js";
import type { BucketLimits } from "./token-bucket.js";

export type { RateWindowOp } from "./rate-window.js";
export type { BucketLimits } from "./token-bucket.js";

/**
 * Keys that expire together: the write that carries it gives each of `keys` that exists (value or
 * list) the TTL `ttlMs`, in the same atomic step. A conversation's keys are refreshed this way on
 * every write, so they all end at one instant and none outlives the others.
 */
export interface Expiry {
  keys: readonly string[];
  ttlMs: number;
}

/**
 * A value written in the same atomic step as an `append` (a "the list changed" mark: a version
 * token, an `existed` flag). Its key shares the list's hash slot.
 */
export interface Put {
  key: string;
  value: unknown;
  /** Its own TTL; none = kept until deleted. */
  ttlMs?: number;
}

/** Items for a list (`Store.appendOnce`'s second list). */
export interface ListItems {
  key: string;
  items: readonly unknown[];
}

/**
 * One step of `Store.batch`: a read (`get`, `length`, `range`), a read-and-delete (`take`, as
 * `Store.take`), a holder's delete (`deleteIfEquals`, as `Store.deleteIfEquals`), or a write: `append`
 * (as `Store.append` without its extras), `expire` (a live key's TTL, as `Expiry` gives it) and `set`.
 * Writes and the reads after them go as one command: a write and what it leaves, read at once.
 * `onlyIfLength` guards the steps after it: they run only if the list at its key holds `length`
 * items; those it skips give what an empty store would (undefined, false, 0, []).
 */
export type StoreStep =
  | { op: "get"; key: string }
  | { op: "length"; key: string }
  | { op: "range"; key: string; start: number; stop: number }
  | { op: "take"; key: string }
  | { op: "deleteIfEquals"; key: string; value: unknown }
  | { op: "append"; key: string; items: readonly unknown[] }
  | { op: "expire"; key: string; ttlMs: number }
  | { op: "set"; key: string; value: unknown; ttlMs?: number }
  | { op: "onlyIfLength"; key: string; length: number };

/**
 * What one `StoreStep` gives: `get` and `take` the value (undefined when absent), `length` and
 * `append` the list's length, `range` the items, `deleteIfEquals` whether it deleted, `expire` and
 * `set` nothing, `onlyIfLength` whether the steps after it ran.
 */
export type StoreStepResult<R extends StoreStep> = R extends { op: "get" | "take" }
  ? unknown
  : R extends { op: "length" | "append" }
    ? number
    : R extends { op: "deleteIfEquals" | "onlyIfLength" }
      ? boolean
      : R extends { op: "expire" | "set" }
        ? undefined
        : unknown[];

/** What a batch step skipped by a failed `onlyIfLength` gives: what an empty store would. */
export function skipped(s: StoreStep): unknown {
  if (s.op === "length" || s.op === "append") return 0;
  if (s.op === "deleteIfEquals" || s.op === "onlyIfLength") return false;
  if (s.op === "range") return [];
  return undefined;
}

/** One counter step of `Store.incrAll`. */
export interface CounterStep {
  key: string;
  by: number;
}

/** What the store holds: live keys and the bytes its backing holds (see each implementation). */
export interface StoreSize {
  keys: number;
  /** File store: the op log's bytes on disk. Redis: the server's `used_memory` (all prefixes). */
  bytes: number;
}

export interface Store {
  readonly kind: "redis" | "file";
  get<T>(key: string): Promise<T | undefined>;
  set<T>(key: string, value: T, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** Atomic set-if-absent with optional TTL (Redis `SET NX PX`). True when this call set it. */
  setIfAbsent<T>(key: string, value: T, ttlMs?: number): Promise<boolean>;
  /** Atomic read-and-delete (Redis `GETDEL`): of concurrent callers, exactly one gets the value. */
  take<T>(key: string): Promise<T | undefined>;
  /**
   * Atomic "record once": only if `claimKey` is absent, set it (expiring after `claimTtlMs`), append
   * `items` to the list `listKey` and set `markerKey`. False, and nothing written, when the claim
   * was there. One step, so a store failure can never leave a claim without its append. `expiry`
   * is applied in the same step, and `also` (another list of the slot: who spoke) appended in it.
   */
  appendOnce<T>(
    claimKey: string,
    claimTtlMs: number,
    listKey: string,
    items: readonly T[],
    markerKey: string,
    expiry?: Expiry,
    also?: ListItems,
  ): Promise<boolean>;
  /** Atomic: extend the TTL only if the key still holds `value` (lease renewal). */
  renewIfEquals<T>(key: string, value: T, ttlMs: number): Promise<boolean>;
  /** Atomic: delete only if the key still holds `value` (lease release). */
  deleteIfEquals<T>(key: string, value: T): Promise<boolean>;
  /**
   * Atomic compare-and-set (Redis: one Lua script): write `next` (expiring after `ttlMs`, or never)
   * only if the key holds exactly `expected` (compared as its JSON encoding), or is absent when
   * `expected` is undefined. False, and nothing written, when another writer got there first.
   * `updateAtomically` (update.ts) builds read-modify-write on it.
   */
  compareAndSet<T>(key: string, expected: T | undefined, next: T, ttlMs?: number): Promise<boolean>;
  /**
   * Atomic step on a shared rate window (rate-window.ts): take, reserve, spend or give back room
   * for one call, or block the key for a 429's Retry-After. 0 = done; else the ms to wait before
   * asking again. Redis: one script on one key, timed by the Redis server's clock, so every
   * process and host spends one budget. The file store keeps windows in memory (one process).
   */
  rateWindow(key: string, op: RateWindowOp): Promise<number>;
  /**
   * Atomic: take one token from the bucket at `key` (token-bucket.ts; a fresh key is a full bucket).
   * 0 = taken; else the ms until a token is there. Redis: one script on one key, timed by the Redis
   * server's clock, so every process spends one bucket. The file store keeps buckets in memory.
   */
  takeToken(key: string, limits: BucketLimits): Promise<number>;
  /**
   * Atomic: give back one token taken from the bucket at `key` for work that did not happen (a
   * full bucket stays full), so the bucket counts only what was done.
   */
  returnToken(key: string, limits: BucketLimits): Promise<void>;
  /** Atomic counter. */
  incr(key: string, by?: number): Promise<number>;
  /**
   * Atomic: add to several counters in one step (Redis: one script, one command on the wire); the
   * new values in order. Every key must share one hash slot (one hash tag) on a cluster.
   */
  incrAll(steps: readonly CounterStep[]): Promise<number[]>;
  /**
   * Append to a list; cost is proportional to `items`, not the list. Returns the new length.
   * `expiry` is applied, and `put` written, in the same atomic step (Redis: one command on the
   * wire; the keys share the list's hash slot).
   */
  append<T>(key: string, items: readonly T[], expiry?: Expiry, put?: Put): Promise<number>;
  /**
   * Several steps run in order as one atomic step (Redis: one script, one command on the wire),
   * results in order. Every key must share one hash slot (one hash tag) on a cluster.
   */
  batch<const R extends readonly StoreStep[]>(
    reads: R,
  ): Promise<{ -readonly [I in keyof R]: StoreStepResult<R[I]> }>;
  /** Items `start..stop` inclusive; negative indexes count from the end (Redis `LRANGE`). */
  range<T>(key: string, start: number, stop: number): Promise<T[]>;
  length(key: string): Promise<number>;
  /** Drop the list's first `count` items (Redis `LTRIM key count -1`): an append-only log's retention. */
  dropFirst(key: string, count: number): Promise<void>;
  /** Keys (unprefixed) starting with `prefix`. */
  keys(prefix: string): Promise<string[]>;
  /**
   * After an erasure: leave no deleted value readable in the store's own files. The file store
   * rewrites its op log from the live keys at once. Redis keeps deleted values in its AOF/RDB files
   * until the server rewrites them; that is the operator's (docs/security.md), so this does nothing.
   */
  purge(): Promise<void>;
  /** Live keys and bytes held (`/neo status`, the storage bench). */
  size(): Promise<StoreSize>;
  /** False while the backing server is unreachable. */
  healthy(): boolean;
  close(): Promise<void>;
}

/** The store could not be reached. Callers that must fail closed (approvals) surface this. */
export class StoreUnavailableError extends Error {
  readonly code = "STORE_UNAVAILABLE";
}

/**
 * Where the store tells its connection transitions. Structural, so the app's logger fits as is and
 * the store imports nothing of ours.
 */
export interface StoreLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(message: string): void;
}
