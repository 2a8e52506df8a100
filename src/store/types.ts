/**
 * The one durable store. Everything durable (cortex, transcripts, journal, approvals, audit) goes
 * through it. Two implementations: Redis (`REDIS_URL`) and an embedded file-backed store.
 * Keys are namespaced by the store's prefix; callers pass unprefixed keys. Values are JSON (a
 * value that JSON cannot represent is rejected). Nothing fails open: while the backend is
 * unreachable EVERY operation rejects at once with `StoreUnavailableError` (never a silent
 * `undefined`), and `healthy()` is false until it is reachable again.
 */
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
   * was there. One step, so a store failure can never leave a claim without its append.
   */
  appendOnce<T>(
    claimKey: string,
    claimTtlMs: number,
    listKey: string,
    items: readonly T[],
    markerKey: string,
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
  /** Atomic counter. */
  incr(key: string, by?: number): Promise<number>;
  /** Append to a list; cost is proportional to `items`, not the list. Returns the new length. */
  append<T>(key: string, items: readonly T[]): Promise<number>;
  /** Items `start..stop` inclusive; negative indexes count from the end (Redis `LRANGE`). */
  range<T>(key: string, start: number, stop: number): Promise<T[]>;
  length(key: string): Promise<number>;
  /** Keys (unprefixed) starting with `prefix`. */
  keys(prefix: string): Promise<string[]>;
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
