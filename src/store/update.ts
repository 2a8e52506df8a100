/**
 * Read-modify-write that holds under concurrency, on `Store.compareAndSet`: read the value, compute
 * the next one, write it only if nobody changed it meanwhile, else read again and recompute.
 * `change` must be pure (it may run several times); it answers `undefined` to leave the value as is.
 */
import type { Store } from "./types.js";

/** Every attempt lost to another writer: the key is too contended to change now. */
export class UpdateConflictError extends Error {
  readonly code = "STORE_UPDATE_CONFLICT";
}

export interface UpdateResult<T, R> {
  /** The value now stored (the old one when `change` left it as is). */
  value: T | undefined;
  /** What `change` said about its decision (e.g. why it refused). */
  result: R;
  /** False when `change` left the value as is. */
  written: boolean;
}

export type Change<T, R> = (current: T | undefined) => { next?: T; result: R };

export interface UpdateOptions<T> {
  ttlMs?: number;
  attempts?: number;
  /**
   * The value the caller read a moment ago: the first attempt starts from it instead of reading.
   * Only a write is taken on its word (the compare-and-set checks it); when `change` would leave it
   * as is, or the guess was wrong, the value is read as usual.
   */
  known?: { value: T | undefined };
}

export async function updateAtomically<T, R>(
  store: Store,
  key: string,
  change: Change<T, R>,
  opts: UpdateOptions<T> = {},
): Promise<UpdateResult<T, R>> {
  const attempts = opts.attempts ?? 50;
  if (opts.known) {
    const { next, result } = change(opts.known.value);
    if (next !== undefined && (await store.compareAndSet(key, opts.known.value, next, opts.ttlMs)))
      return { value: next, result, written: true };
  }
  for (let i = 0; i < attempts; i++) {
    const current: T | undefined = await store.get<T>(key);
    const { next, result } = change(current);
    if (next === undefined) return { value: current, result, written: false };
    if (await store.compareAndSet(key, current, next, opts.ttlMs))
      return { value: next, result, written: true };
  }
  throw new UpdateConflictError(`"${key}" changed under ${attempts} attempts in a row; try again`);
}
