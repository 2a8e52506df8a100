/**
 * Vitest global setup: one key prefix for the whole run (`neo-test:<run id>:`), under which every
 * test's `uniquePrefix()` lives, and, when the run ends, every key under it deleted, so a test run
 * leaves nothing in the shared Redis (whatever a test forgot, or a killed worker left).
 */
import { randomUUID } from "node:crypto";
import type { TestProject } from "vitest/node";
import { createStore } from "../../src/store/create-store.js";
import { probeRedis, REDIS_URL } from "./redis.js";

declare module "vitest" {
  export interface ProvidedContext {
    neoTestRunPrefix: string;
  }
}

export default function setup(project: TestProject): () => Promise<void> {
  const prefix = `neo-test:${randomUUID().slice(0, 8)}:`;
  project.provide("neoTestRunPrefix", prefix);
  return async () => {
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
