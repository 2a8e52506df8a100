import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One Redis key prefix per run; every key under it is deleted when the run ends.
    globalSetup: ["test/support/redis-run.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Tests own their servers, ports and Redis prefixes; files run in parallel, tests inside a file in order.
    fileParallelism: true,
  },
});
