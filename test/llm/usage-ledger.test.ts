/**
 * The usage ledger in a long-running process: every call is priced and handed on (to the durable
 * counts, and back to the client for /metrics), and the ledger itself keeps no total per user or
 * per conversation, so 100,000 distinct ones leave nothing behind in memory.
 */
import { describe, expect, it } from "vitest";
import { createUsageLedger, type UsageEntry } from "../../src/core/llm/usage-ledger.js";
import { MB, retainedBytes } from "../support/heap.js";

const PRICES = new Map([["main-model", { input: 2, output: 8 }]]);

describe("usage ledger", () => {
  it("keeps nothing per user or conversation: 100,000 distinct ones retain no memory", async () => {
    const ledger = createUsageLedger(PRICES);
    let handed = 0;
    let last: UsageEntry | undefined;
    ledger.onRecord((e) => {
      handed++;
      last = e;
    });
    const call = (i: number) =>
      ledger.record(
        "main-model",
        { purpose: "turn", conversation: `slack:T1:C${i}:${i}.000100`, user: `slack:T1:U${i}` },
        { promptTokens: 100, completionTokens: 20 },
      );
    for (let i = 0; i < 1000; i++) call(i); // warm the code before measuring
    const n = 100_000;
    const retained = await retainedBytes(() => {
      for (let i = 1000; i < 1000 + n; i++) call(i);
    });
    // Per-user and per-conversation totals held ~30 MB for these keys.
    expect(retained).toBeLessThan(3 * MB);
    // Every call was still priced and handed on, with its tags.
    expect(handed).toBe(1000 + n);
    expect(last).toMatchObject({
      model: "main-model",
      tags: { user: `slack:T1:U${n + 999}`, conversation: `slack:T1:C${n + 999}:${n + 999}.000100` },
      costUsd: (100 * 2 + 20 * 8) / 1_000_000,
    });
    expect(ledger.total()).toMatchObject({ calls: 1000 + n, promptTokens: 100 * (1000 + n) });
  });
});
