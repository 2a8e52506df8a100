/**
 * The one way to get a Store: Redis when `redisUrl` is given, else the embedded file store.
 */
import type { HealthCheck } from "../../ops/health.js";
import { createFileStore } from "./file-store.js";
import { createRedisStore } from "./redis-store.js";
import type { Store } from "./types.js";

export interface CreateStoreOptions {
  /** `REDIS_URL`; unset = the embedded file store under `dataDir`. */
  redisUrl?: string;
  /** `NEO_DATA_DIR`, used by the file store. */
  dataDir: string;
  /** `NEO_KEY_PREFIX`: namespace for every key. */
  prefix: string;
  /** Redis only: how long start-up waits for the first connection (default 2000 ms). */
  connectWaitMs?: number;
}

export async function createStore(opts: CreateStoreOptions): Promise<Store> {
  if (opts.redisUrl) {
    return createRedisStore({ url: opts.redisUrl, prefix: opts.prefix, connectWaitMs: opts.connectWaitMs });
  }
  return createFileStore({ dataDir: opts.dataDir, prefix: opts.prefix });
}

export type { Store } from "./types.js";
export { StoreUnavailableError } from "./types.js";

/** `/healthz` entry for the store: not ok while Redis is unreachable (the bot still answers). */
export function storeHealthCheck(store: Store): HealthCheck {
  return { name: "store", check: () => ({ ok: store.healthy(), detail: { kind: store.kind } }) };
}
