import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One Redis key prefix per run (every key under it deleted when the run ends); the MCP fixtures built once.
    globalSetup: ["test/support/redis-run.ts", "test/support/mcp-fixtures.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Tests own their servers, ports and Redis prefixes; files run in parallel, tests inside a file in order.
    fileParallelism: true,
    // Vitest's default leaves a core free, which is one worker on a 2-core machine (CI's). The files
    // mostly wait on processes, sockets and Redis, so one worker more than cores keeps the cores busy:
    // on the 2-core CI machine 2 workers took 9.6 min, 3 took 8.3 (2026-11-29, same tree).
    maxWorkers: availableParallelism() + 1,
  },
});
