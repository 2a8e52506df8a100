/**
 * Vitest global setup: one key prefix for the whole run (`neo-test:<run id>:`), under which every
 * test's `uniquePrefix()` lives, and, when the run ends, every key under it deleted, so a test run
 * leaves nothing in the shared Redis (whatever a test forgot, or a killed worker left).
 *
 * It also starts one local Redis Cluster (3 primaries, nothing on disk) for the suites that run on
 * a cluster too (`clusterBackend`), and stops it at the end. Without redis-server the cluster
 * suites report skipped (under CI=true, fail: `probeRedisCluster`).
 */
import { randomUUID } from "node:crypto";
import type { TestProject } from "vitest/node";
import { createStore } from "../../src/store/create-store.js";
import { probeRedis, REDIS_URL } from "./redis.js";
import { probeRedisCluster, startRedisCluster } from "./redis-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    neoTestRunPrefix: string;
    /** The run's Redis Cluster seed URLs, comma-separated ("" when there is none). */
    neoTestClusterUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const prefix = `neo-test:${randomUUID().slice(0, 8)}:`;
  project.provide("neoTestRunPrefix", prefix);
  const cluster = probeRedisCluster().ok ? await startRedisCluster({ primaries: 3 }) : undefined;
  project.provide("neoTestClusterUrl", cluster?.url ?? "");
  return async () => {
    await cluster?.stop();
    const redis = await probeRedis(REDIS_URL);
    if (!redis.ok) return;
    const store = await createStore({ redisUrl: REDIS_URL, dataDir: "unused", prefix });
    try {
      const keys = await store.keys("");
      for (const key of keys) await store.delete(key);
    } finally {
      await store.close();
    }
  };
}
