/**
 * Per-conversation lease lock in the shared store: set-if-absent with a TTL, renewed while held,
 * released only by its holder, and free for another instance once the holder stops renewing.
 */
import { randomUUID } from "node:crypto";
import type { Store, StoreStep } from "../../store/types.js";
import { log } from "../log.js";

export interface Lease {
  /** Set when a renewal found the lease gone (expired and taken over): stop writing at once. */
  readonly lost: boolean;
  /**
   * The running turn (null: none), aborted with reason "lease" if the lease is lost while it runs.
   * A field, not an abort listener: one turn at a time, and an EventTarget listener per turn cost
   * ~15 µs of CPU.
   */
  guard(turn: AbortController | null): void;
  release(): Promise<void>;
  /**
   * Release, then read the length of the list at `listKey` (a key of the lease's hash slot), in one
   * command: what was added before the release is counted; whoever adds after it finds the lease free.
   */
  releaseThenLength(listKey: string): Promise<number>;
  /**
   * Let go in another command of the lease's hash slot, perhaps (behind a guard): `step` deletes the
   * lease if it is still ours. Renewal pauses until `settle` says whether the command let go.
   */
  letGoIn(): { step: StoreStep; settle(letGo: boolean): void };
}

export interface Leases {
  /** The lease, or null when another holder has it. */
  tryAcquire(key: string): Promise<Lease | null>;
  /** Delete leases a previous run of this same instance id left behind (it is gone: we are it). */
  clearOwnStale(prefix: string): Promise<number>;
}

export function createLeases(store: Store, instanceId: string, leaseMs: number): Leases {
  const renewEvery = Math.max(50, Math.floor(leaseMs / 3));
  return {
    async tryAcquire(key) {
      const token = `${instanceId}#${randomUUID()}`;
      if (!(await store.setIfAbsent(key, token, leaseMs))) return null;
      let lost = false;
      let guarded: AbortController | null = null;
      let released = false;
      // Renewed while it holds our token; taken again when the key is simply gone (the store
      // restarted empty): no one else holds it, and the log's length check catches any writer between.
      const renew = async (): Promise<boolean> =>
        (await store.renewIfEquals(key, token, leaseMs)) || (await store.setIfAbsent(key, token, leaseMs));
      const renewing = () => {
        const every = setInterval(() => {
          renew().then(
            (ok) => {
              if (!ok && !released) {
                log.warn({ key }, "conversation lease lost; stopping the turn");
                lost = true;
                guarded?.abort("lease");
              }
            },
            (err: unknown) => log.warn({ key, err }, "conversation lease renewal failed; will retry"),
          );
        }, renewEvery);
        every.unref();
        return every;
      };
      let timer = renewing();
      const stop = () => {
        released = true;
        clearInterval(timer);
      };
      return {
        get lost() {
          return lost;
        },
        guard(turn) {
          guarded = turn;
        },
        letGoIn() {
          // Not renewed while the command may delete it: a renewal finding it gone would take it again.
          clearInterval(timer);
          return {
            step: { op: "deleteIfEquals", key, value: token },
            settle(letGo) {
              if (letGo) stop();
              else if (!released) timer = renewing();
            },
          };
        },
        async release() {
          stop();
          await store.deleteIfEquals(key, token);
        },
        async releaseThenLength(listKey) {
          stop();
          const [, length] = await store.batch([
            { op: "deleteIfEquals", key, value: token },
            { op: "length", key: listKey },
          ]);
          return length;
        },
      };
    },
    async clearOwnStale(prefix) {
      let cleared = 0;
      for (const key of await store.keys(prefix)) {
        const holder = await store.get<string>(key);
        if (typeof holder === "string" && holder.startsWith(`${instanceId}#`)) {
          if (await store.deleteIfEquals(key, holder)) cleared++;
        }
      }
      return cleared;
    },
  };
}
