import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Tests own their servers, ports and Redis prefixes; files run in parallel, tests inside a file in order.
    fileParallelism: true,
  },
});
