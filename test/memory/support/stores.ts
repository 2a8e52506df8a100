/**
 * Store backends for the shared suites: each `open()` is a NEW store instance over the SAME
 * backing data (same Redis prefix, or same data dir), which is what a restart looks like.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { type CreateStoreOptions, createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/types.js";
import { probeRedis, uniquePrefix } from "../../support/redis.js";

export interface Backend {
  /** What `open()` passes to createStore (so a child process can open the same data). */
  options: CreateStoreOptions;
  /** A new store instance over this backend's data. Close the previous one first for the file store. */
  open(): Promise<Store>;
  cleanup(): Promise<void>;
}

export type BackendFactory = (name: string) => Backend;

export const redis = await probeRedis();

export const redisBackend: BackendFactory = (name) =>
  redisBacked({ redisUrl: redis.url, dataDir: "unused", prefix: uniquePrefix(name) });

/** The run's local Redis Cluster (test/support/redis-run.ts); "" when redis-server is missing. */
export const clusterUrl = process.env.VITEST ? inject("neoTestClusterUrl") : "";

export const clusterBackend: BackendFactory = (name) =>
  redisBacked({ redisUrl: clusterUrl, redisCluster: true, dataDir: "unused", prefix: uniquePrefix(name) });

function redisBacked(options: CreateStoreOptions): Backend {
  const opened: Store[] = [];
  return {
    options,
    open: async () => {
      const s = await createStore(options);
      opened.push(s);
      return s;
    },
    cleanup: async () => {
      const s = opened.at(-1);
      if (s?.healthy()) for (const k of await s.keys("")) await s.delete(k);
      for (const o of opened) await o.close();
    },
  };
}

export const fileBackend: BackendFactory = (name) => {
  const dir = mkdtempSync(join(tmpdir(), `neo-${name.replace(/\W+/g, "-")}-`));
  const options = { dataDir: dir, prefix: "neo:" };
  const opened: Store[] = [];
  return {
    options,
    open: async () => {
      const s = await createStore(options);
      opened.push(s);
      return s;
    },
    cleanup: async () => {
      for (const o of opened) await o.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

/** Both backends, Redis skipped (with the probe's reason) when no server answers. */
export const BACKENDS: { name: string; factory: BackendFactory; skip: boolean }[] = [
  { name: `redis${redis.ok ? "" : ` (skipped: ${redis.reason})`}`, factory: redisBackend, skip: !redis.ok },
  { name: "file", factory: fileBackend, skip: false },
];

/** BACKENDS and the run's Redis Cluster: for the suites that must hold on a cluster too. */
export const WITH_CLUSTER: { name: string; factory: BackendFactory; skip: boolean }[] = [
  ...BACKENDS,
  {
    name: `redis cluster${clusterUrl ? "" : " (skipped: no redis-server)"}`,
    factory: clusterBackend,
    skip: !clusterUrl,
  },
];
