/**
 * The one way to get a Store: Redis when `redisUrl` is given, else the embedded file store. The
 * Redis store is imported only then: its client loads some 420 modules (one per command), ~0.4 s
 * of start-up a process on the file store (console mode, a single small bot) has no use for.
 */
import { createFileStore } from "./file-store.js";
import type { Store, StoreLog } from "./types.js";

export interface CreateStoreOptions {
  /** `REDIS_URL`; unset = the embedded file store under `dataDir`. */
  redisUrl?: string;
  /** `REDIS_CLUSTER`: `redisUrl` lists a Redis Cluster's seed nodes. */
  redisCluster?: boolean;
  /** `NEO_DATA_DIR`, used by the file store. */
  dataDir: string;
  /** `NEO_KEY_PREFIX`: namespace for every key. */
  prefix: string;
  /** Redis only: how long start-up waits for the first connection (default 2000 ms). */
  connectWaitMs?: number;
  /** Where connection transitions are told (the app passes its logger). */
  log?: StoreLog;
}

export async function createStore(opts: CreateStoreOptions): Promise<Store> {
  if (opts.redisUrl) {
    const { createRedisStore } = await import("./redis-store.js");
    return createRedisStore({
      url: opts.redisUrl,
      cluster: opts.redisCluster,
      prefix: opts.prefix,
      connectWaitMs: opts.connectWaitMs,
      log: opts.log,
    });
  }
  return createFileStore({ dataDir: opts.dataDir, prefix: opts.prefix });
}

export type { Store, StoreLog } from "./types.js";
export { StoreUnavailableError } from "./types.js";
