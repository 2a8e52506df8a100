/**
 * The daily token budget is durable and shared: counted per user per UTC day in the Store, it
 * survives a new store and tracker on the same Redis, and two instances on one Redis add to one
 * total. The client asks the budget before a user's `turn` call and makes no request when refused;
 * write-back for that user still runs. With the store unreachable the budget fails open, with a
 * warning. Real Redis at REDIS_URL (unique key prefix per test) and a test-owned redis-server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BudgetExceededError } from "../../src/core/llm/errors.js";
import type { CompletionRequest } from "../../src/core/llm/types.js";
import { createUsageLedger, type UsageLedger } from "../../src/core/llm/usage-ledger.js";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import { createUsageTracker } from "../../src/core/usage/index.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type OwnedRedis, ownedRedis } from "../memory/support/redis-server.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

const redis = await probeRedis();
const ANN = "slack:T1:UANN";
const BOB = "slack:T1:UBOB";
// 2026-11-23 23:00 UTC: one hour before the budget resets.
const LATE = Date.UTC(2026, 10, 23, 23, 0, 0);

const opened: Store[] = [];
let ep: ScriptedOpenAI | undefined;
let owned: OwnedRedis | undefined;
afterEach(async () => {
  for (const s of opened.splice(0)) {
    if (s.healthy()) for (const k of await s.keys("")) await s.delete(k);
    await s.close();
  }
  await ep?.close();
  ep = undefined;
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
function instance(store: Store, dailyTokens: number, now = () => LATE) {
  const ledger: UsageLedger = createUsageLedger();
  const tracker = createUsageTracker({ store, ledger, dailyTokens, now });
  const spend = (user: string, prompt: number, completion: number) =>
    ledger.record(
      "main-model",
      { purpose: "turn", user },
      { promptTokens: prompt, completionTokens: completion },
    );
  return { ledger, tracker, spend };
}

const turnReq = (user: string): CompletionRequest => ({
  role: "main",
  system: "sys",
  messages: [{ role: "user", content: "hi" }],
  tags: { purpose: "turn", conversation: `slack:T1:C1:${user}`, user },
});

describe.skipIf(!redis.ok)("daily token budget on Redis", () => {
  it("survives a new store and tracker on the same Redis, with the limit, count and reset time", async () => {
    const prefix = uniquePrefix("usage-restart");
    const first = instance(await redisStore(prefix), 100);
    first.spend(ANN, 70, 40);
    first.spend(BOB, 10, 5);
    await first.tracker.flushed();
    await opened[0]!.close();
    opened.splice(0, 1);

    // A restart: nothing in memory carries over, only Redis.
    const second = instance(await redisStore(prefix), 100);
    const refusal = await second.tracker.gate!.admit(ANN);
    expect(refusal).toMatchObject({
      user: ANN,
      used: 110,
      limit: 100,
      resetsAt: Date.UTC(2026, 10, 24),
    });
    expect(refusal!.message).toBe(
      "You've reached your daily limit: 110 of 100 tokens used today. It resets at 00:00 UTC (in 1 h); I can't answer you until then.",
    );
    expect(await second.tracker.gate!.admit(BOB)).toBeUndefined();
    expect(second.ledger.total().calls).toBe(0);
  });

  it("adds two instances' spending into one total", async () => {
    const prefix = uniquePrefix("usage-shared");
    const a = instance(await redisStore(prefix), 100);
    const b = instance(await redisStore(prefix), 100);
    a.spend(ANN, 40, 20); // 60 on instance A
    expect(await a.tracker.gate!.admit(ANN)).toBeUndefined();
    expect(await b.tracker.gate!.admit(ANN)).toBeUndefined();
    b.spend(ANN, 30, 15); // 45 on instance B: 105 in all, neither alone at 100
    await b.tracker.flushed();
    expect((await a.tracker.gate!.admit(ANN))?.used).toBe(105);
    expect((await b.tracker.gate!.admit(ANN))?.used).toBe(105);
    // Both instances' status shows the shared count for today.
    expect(await a.tracker.summary()).toContain(`\`${ANN}\` 105 tokens (limit reached)`);
  });

  it("starts over on the next UTC day", async () => {
    const store = await redisStore(uniquePrefix("usage-day"));
    await store.incr(`usage:day:2026-11-21:${ANN}`, 7); // an old day, left by an earlier run
    let now = LATE;
    const inst = instance(store, 100, () => now);
    inst.spend(ANN, 100, 0);
    expect((await inst.tracker.gate!.admit(ANN))?.used).toBe(100);
    expect((await inst.tracker.gate!.admit(ANN))?.message).toContain("100 of 100 tokens");
    now = Date.UTC(2026, 10, 24, 0, 0, 1);
    expect(await inst.tracker.gate!.admit(ANN)).toBeUndefined();
    inst.spend(ANN, 5, 0);
    await inst.tracker.flushed();
    // Days before yesterday are pruned; yesterday and today remain.
    expect((await store.keys("usage:day:")).sort()).toEqual([
      `usage:day:2026-11-23:${ANN}`,
      `usage:day:2026-11-24:${ANN}`,
    ]);
  });

  it("refuses the user's turn call before any request, while write-back for them and other users go through", async () => {
    const store = await redisStore(uniquePrefix("usage-client"));
    ep = await startScriptedOpenAI([
      { label: "ann's first turn", reply: { text: "one", usage: { prompt: 80, completion: 30 } } },
      { label: "ann's write-back", reply: { text: "{}", usage: { prompt: 20, completion: 2 } } },
      { label: "bob's turn", reply: { text: "hi bob", usage: { prompt: 5, completion: 1 } } },
    ]);
    const { llm, usage } = createLlmForTest(ep, {}, { store, dailyTokens: 100 });
    await llm.complete(turnReq(ANN));
    const err = await llm.complete(turnReq(ANN)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExceededError);
    expect(err).toMatchObject({ code: "LLM_BUDGET", refusal: { used: 110, limit: 100 } });
    expect(ep.requests).toHaveLength(1);
    // Work for the turn that already ran finishes, and still counts.
    await llm.complete({ ...turnReq(ANN), tags: { purpose: "writeback", user: ANN } });
    await llm.complete(turnReq(BOB));
    expect(ep.requests.map((r) => r.purpose)).toEqual(["turn", "writeback", "turn"]);
    await usage!.flushed();
    expect(await usage!.gate!.admit(ANN)).toMatchObject({ used: 132 });
  });
});

describe("daily token budget with the store unreachable", () => {
  it("fails open with one warning: the user is admitted and the bot keeps answering", async () => {
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
    ep = await startScriptedOpenAI([
      { reply: { text: "still here", usage: { prompt: 500, completion: 500 } } },
    ]);
    const { llm, usage } = createLlmForTest(ep, {}, { store, dailyTokens: 10 });
    const res = await llm.complete(turnReq(ANN));
    expect(res.content).toBe("still here");
    expect(await usage!.gate!.admit(ANN)).toBeUndefined();
    await usage!.flushed();
    const warnings = lines.filter((l) => l.includes("daily token budgets are NOT enforced"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, component: "usage-budget" });
    expect(await usage!.summary()).toMatch(/today's counts unavailable .*budgets not enforced/);
  });
});
