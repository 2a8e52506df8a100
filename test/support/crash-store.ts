/**
 * A process that dies at a chosen store write, in process: the store it writes through stops
 * answering at that call, and every later call (lease renewals included) hangs too, as nothing
 * reaches the store from a dead process. The real store underneath is untouched, so another
 * instance on it (the restart) finds exactly what the first one left.
 */
import type { Store } from "../../src/store/types.js";

export interface CrashPoint {
  /** Resolves when the chosen call was made: the process is "dead" from then on. */
  crashed: Promise<void>;
  /** The store the dying process writes through. */
  wrap(store: Store): Store;
}

/** `at(method, args)` picks the call the process dies in (it never reaches the store). */
export function crashAt(at: (method: string, args: unknown[]) => boolean): CrashPoint {
  let dead = false;
  let died!: () => void;
  const crashed = new Promise<void>((r) => {
    died = r;
  });
  const never = new Promise<never>(() => {});
  return {
    crashed,
    wrap: (store) =>
      new Proxy(store, {
        get(target, prop, receiver) {
          const value: unknown = Reflect.get(target, prop, receiver);
          if (typeof value !== "function" || prop === "healthy" || prop === "close") return value;
          return (...args: unknown[]) => {
            if (!dead && at(String(prop), args)) {
              dead = true;
              died();
            }
            if (dead) return never;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      }),
  };
}

/**
 * A store call that appends an entry of `type` to a conversation's log: an `append`, or a `batch`
 * with such an append among its steps (a log write and the inbox read behind it go as one command).
 */
export const logAppendOf = (type: string) => {
  const appends = (key: unknown, items: unknown): boolean =>
    typeof key === "string" &&
    key.startsWith("conv:log:") &&
    Array.isArray(items) &&
    items.some((e) => (e as { type?: unknown }).type === type);
  return (method: string, args: unknown[]): boolean => {
    if (method === "append") return appends(args[0], args[1]);
    if (method !== "batch" || !Array.isArray(args[0])) return false;
    return (args[0] as { op?: unknown; key?: unknown; items?: unknown }[]).some(
      (s) => s.op === "append" && appends(s.key, s.items),
    );
  };
};

/** The write of a turn's end marker to a conversation's log: the answer was posted, the turn not closed. */
export const endMarker = logAppendOf("turn-end");
