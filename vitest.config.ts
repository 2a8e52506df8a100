import { availableParallelism } from "node:os";
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
    // Vitest's default leaves a core free, which is one worker on a 2-core machine (CI's): the files,
    // mostly waiting on processes, sockets and Redis, then run one at a time (9.5 min; 6.3 with 2).
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
