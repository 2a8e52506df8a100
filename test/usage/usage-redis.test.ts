/**
 * Usage counts are durable and shared: counted per user and for the deployment, per UTC day and
 * month, in the Store, they survive a new store and tracker on the same Redis (a restart), and two
 * instances on one Redis add to one total. With the store unreachable the budget fails open, with
 * one warning. Real Redis at REDIS_URL (unique key prefix per test) and a test-owned redis-server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { hashTagOf } from "../../src/core/keys.js";
import { createUsageLedger, type UsageLedger } from "../../src/core/llm/usage-ledger.js";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import { createUsageTracker } from "../../src/core/usage/index.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type OwnedRedis, ownedRedis } from "../memory/support/redis-server.js";
import { clusterBackend, clusterUrl } from "../memory/support/stores.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";

const redis = await probeRedis();
const ANN = "slack:T1:UANN";
const BOB = "slack:T1:UBOB";
// 2026-11-23 23:00 UTC: one hour before the day's budget resets.
const LATE = Date.UTC(2026, 10, 23, 23, 0, 0);
// $2 in, $8 out per million tokens.
const PRICES = new Map([["main-model", { input: 2, output: 8 }]]);

const opened: Store[] = [];
let owned: OwnedRedis | undefined;
afterEach(async () => {
  for (const s of opened.splice(0)) {
    if (s.healthy()) for (const k of await s.keys("")) await s.delete(k);
    await s.close();
  }
  await owned?.kill();
  owned = undefined;
  setLogLevel("silent");
  setLogSink((l) => process.stdout.write(l));
});

async function redisStore(prefix: string): Promise<Store> {
  const s = await createStore({ redisUrl: redis.url, dataDir: "unused", prefix });
  opened.push(s);
  return s;
}

/** One bot instance's usage wiring: its own ledger and tracker over `store`. */
function instance(store: Store, userDailyUsd: number | undefined, now = () => LATE) {
  const ledger: UsageLedger = createUsageLedger(PRICES);
  const tracker = createUsageTracker({ store, ledger, userDailyUsd, now });
  const spend = (user: string, prompt: number, completion: number) =>
    ledger.record(
      "main-model",
      { purpose: "turn", user },
      { promptTokens: prompt, completionTokens: completion },
    );
  return { ledger, tracker, spend };
}

describe.skipIf(!redis.ok)("durable usage on Redis", () => {
  it("survives a restart: /neo usage's report and totals, and the budget, read the same counts", async () => {
    const prefix = uniquePrefix("usage-restart");
    const first = instance(await redisStore(prefix), 0.001);
    first.spend(ANN, 300, 50); // $0.0006 + $0.0004 = $0.001
    first.spend(BOB, 100, 0); // $0.0002
    await first.tracker.flushed();
    await opened[0]!.close();
    opened.splice(0, 1);

    // A restart: nothing in memory carries over, only Redis.
    const second = instance(await redisStore(prefix), 0.001);
    expect(second.ledger.total().calls).toBe(0);
    expect(await second.tracker.report(ANN)).toBe(
      [
        "• Today (UTC): $0.0010 · 350 tokens · 1 model call",
        "• This month (2026-11): $0.0010 · 350 tokens · 1 model call",
        "• Daily budget: $0.0010, 100 % used today (resets 00:00 UTC, in 1 h)",
      ].join("\n"),
    );
    expect(await second.tracker.totals()).toBe(
      [
        "• Deployment today (UTC): $0.0012 · 450 tokens · 2 model calls",
        "• Deployment this month (2026-11): $0.0012 · 450 tokens · 2 model calls",
        "• Users today:",
        `    • \`${ANN}\` $0.0010 · 350 tokens · 1 model call`,
        `    • \`${BOB}\` $0.00020 · 100 tokens · 1 model call`,
        "• Users this month:",
        `    • \`${ANN}\` $0.0010 · 350 tokens · 1 model call`,
        `    • \`${BOB}\` $0.00020 · 100 tokens · 1 model call`,
      ].join("\n"),
    );
    expect(await second.tracker.budget!.check(ANN)).toMatchObject({ kind: "exceeded", usedUsd: 0.001 });
    expect(await second.tracker.budget!.check(BOB)).toEqual({ kind: "ok" });
  });

  it("adds two instances' spending into one total, and the warning is told once across them", async () => {
    const prefix = uniquePrefix("usage-shared");
    const a = instance(await redisStore(prefix), 0.001);
    const b = instance(await redisStore(prefix), 0.001);
    a.spend(ANN, 200, 0); // $0.0004 on A
    b.spend(ANN, 225, 0); // $0.00045 on B: $0.00085 in all, 85 %
    await a.tracker.flushed();
    expect(await b.tracker.budget!.check(ANN)).toMatchObject({ kind: "warning", usedUsd: 0.00085 });
    expect(await a.tracker.budget!.check(ANN)).toEqual({ kind: "ok" });
    expect(await a.tracker.statusLines()).toContain(
      "• Usage today (UTC, all instances): $0.00085 · 425 tokens · 2 model calls",
    );
  });

  it("a user's own budget replaces the default, and `default` brings it back", async () => {
    const inst = instance(await redisStore(uniquePrefix("usage-own")), 1);
    inst.spend(ANN, 500, 0); // $0.001
    expect(await inst.tracker.budget!.check(ANN)).toEqual({ kind: "ok" });
    expect(await inst.tracker.setBudget(ANN, 0.001)).toBe(`Daily budget of \`${ANN}\` is now $0.0010.`);
    expect(await inst.tracker.budget!.check(ANN)).toMatchObject({ kind: "exceeded", limitUsd: 0.001 });
    expect(await inst.tracker.setBudget(ANN, undefined)).toBe(
      `Daily budget of \`${ANN}\` is back to the default ($1.00).`,
    );
    expect(await inst.tracker.budget!.check(ANN)).toEqual({ kind: "ok" });
  });

  it("starts the day over at midnight UTC, keeps the month, and prunes days older than 35", async () => {
    const store = await redisStore(uniquePrefix("usage-day"));
    await store.incr(`usage:calls:2026-10-01:{${ANN}}`, 7); // an old day, left by an earlier run
    let now = LATE;
    const inst = instance(store, 0.001, () => now);
    inst.spend(ANN, 500, 0);
    await inst.tracker.flushed();
    expect(await inst.tracker.budget!.check(ANN)).toMatchObject({ kind: "exceeded" });
    now = Date.UTC(2026, 10, 24, 0, 0, 1);
    expect(await inst.tracker.budget!.check(ANN)).toEqual({ kind: "ok" });
    expect(await inst.tracker.report(ANN)).toContain(
      "• This month (2026-11): $0.0010 · 500 tokens · 1 model call",
    );
    expect(await store.keys("usage:calls:2026-10-01:")).toEqual([]);
  });
});

describe.skipIf(!redis.ok)("usage counters' layout", () => {
  it("every counter of a scope carries the scope's hash tag, and the deployment's older untagged counters still count", async () => {
    const store = await redisStore(uniquePrefix("usage-layout"));
    // Left by a version that wrote the deployment's counters without a hash tag: $0.0005, 100 tokens, 1 call.
    await store.incr("usage:nusd:2026-11-23:*", 500_000);
    await store.incr("usage:tok:2026-11-23:*", 100);
    await store.incr("usage:ptok:2026-11-23:*", 100);
    await store.incr("usage:calls:2026-11-23:*", 1);
    const legacy = await store.keys("usage:");
    const inst = instance(store, undefined);
    inst.spend(ANN, 300, 50); // $0.001
    await inst.tracker.flushed();
    const written = (await store.keys("usage:")).filter((k) => !legacy.includes(k));
    expect(written.length).toBeGreaterThan(0);
    // A scope's counters share a hash slot: one atomic step adds to all of them, also on a cluster.
    expect(written.filter((k) => hashTagOf(k) === undefined)).toEqual([]);
    expect(new Set(written.map(hashTagOf))).toEqual(new Set([ANN, "*"]));
    expect(await inst.tracker.totals()).toContain(
      "• Deployment today (UTC): $0.0015 · 450 tokens · 2 model calls",
    );
  });

  it.skipIf(!clusterUrl)("counts and reads on a Redis Cluster", async () => {
    const backend = clusterBackend("usage-cluster");
    try {
      const a = instance(await backend.open(), 0.001);
      a.spend(ANN, 200, 0); // $0.0004
      a.spend(BOB, 100, 0); // $0.0002
      await a.tracker.flushed();
      expect(await a.tracker.totals()).toContain(
        "• Deployment today (UTC): $0.00060 · 300 tokens · 2 model calls",
      );
      expect(await a.tracker.report(ANN)).toContain("• Today (UTC): $0.00040 · 200 tokens · 1 model call");
    } finally {
      await backend.cleanup();
    }
  });
});

describe("usage with the store unreachable", () => {
  it("fails open with one warning: the user is admitted and status says budgets are not enforced", async () => {
    owned = await ownedRedis(); // never started: nothing listens on its port
    const store = await createStore({
      redisUrl: owned.url,
      dataDir: "unused",
      prefix: "neo:",
      connectWaitMs: 200,
    });
    opened.push(store);
    const lines: string[] = [];
    setLogSink((l) => lines.push(l));
    setLogLevel("warn");
    const inst = instance(store, 0.000001);
    inst.spend(ANN, 500, 500);
    expect(await inst.tracker.budget!.check(ANN)).toEqual({ kind: "ok" });
    await inst.tracker.flushed();
    const warnings = lines.filter((l) => l.includes("budgets are NOT enforced"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, component: "usage-budget" });
    expect(await inst.tracker.statusLines()).toMatch(/Usage today: unavailable .*budgets not enforced/);
  });
});
