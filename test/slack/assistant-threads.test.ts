/**
 * The assistant threads a long-running process has seen (whose Status is the thread's own): the
 * most recently seen are kept, so 100,000 threads over the process's life leave a bounded set.
 */
import { describe, expect, it } from "vitest";
import { createAssistantThreads, MAX_ASSISTANT_THREADS } from "../../src/adapters/slack/assistant-threads.js";
import { MB, retainedBytes } from "../support/heap.js";

describe("assistant threads seen", () => {
  it("keeps the most recently seen: 100,000 threads retain no more than the bound", async () => {
    const threads = createAssistantThreads();
    const seen = (i: number) => threads.seen("T1", `D${i % 500}`, `1729999327.${String(i).padStart(6, "0")}`);
    const has = (i: number) => threads.has("T1", `D${i % 500}`, `1729999327.${String(i).padStart(6, "0")}`);
    // Fill to the bound first: what is measured is the growth past it.
    for (let i = 0; i < MAX_ASSISTANT_THREADS; i++) seen(i);
    // A thread seen again early stays among the recent ones.
    const asksAgain = 7;
    const n = 100_000;
    const retained = await retainedBytes(() => {
      for (let i = MAX_ASSISTANT_THREADS; i < MAX_ASSISTANT_THREADS + n; i++) {
        seen(i);
        if (i % 1000 === 0) seen(asksAgain);
      }
    });
    // Every thread ever seen (the old unbounded set) held ~13 MB here.
    expect(retained).toBeLessThan(2 * MB);
    const last = MAX_ASSISTANT_THREADS + n - 1;
    expect(has(last)).toBe(true);
    expect(has(last - (MAX_ASSISTANT_THREADS - 2))).toBe(true);
    expect(has(asksAgain)).toBe(true);
    expect(has(0)).toBe(false);
    // A forgotten thread is known again once it is seen again (its next question).
    seen(0);
    expect(has(0)).toBe(true);
  });
});
