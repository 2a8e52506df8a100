/**
 * Redis restarted empty under running conversations (issue 20 item 4): every acknowledged message
 * is still answered, and every request the model gets is valid and extends the conversation's last
 * one (the validating endpoint rejects anything else with a 400, which fails the turn). Real loop,
 * real openai SDK, the store on a test-owned `redis-server` that is SIGKILLed and started again with
 * nothing in it.
 */
import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../app/support/bot-process.js";
import { killRedisServer, startRedisServer } from "../support/redis-server.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { contentText } from "../support/transcript-checks.js";
import { turnsStarted } from "../support/turn-started.js";
import {
  answerQuestions,
  createHarness,
  type Harness,
  holdFirstAnswer,
  inbound,
  requestsOf,
  saysOf,
} from "./harness.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

async function setUp(): Promise<{
  ep: ScriptedOpenAI;
  h: Harness;
  redis: () => ChildProcess;
  restartEmpty: () => Promise<void>;
  kill: () => Promise<void>;
  start: () => Promise<void>;
}> {
  const ep = await startScriptedOpenAI();
  cleanups.push(() => ep.close());
  const port = await freePort();
  let redis = await startRedisServer(port);
  cleanups.push(() => killRedisServer(redis));
  const h = await createHarness(ep, { redisUrl: `redis://127.0.0.1:${port}` });
  cleanups.push(() => h.close());
  const kill = () => killRedisServer(redis);
  const start = async () => {
    redis = await startRedisServer(port);
    await until("the store reconnected", () => h.store.healthy());
  };
  return {
    ep,
    h,
    redis: () => redis,
    kill,
    start,
    restartEmpty: async () => {
      await kill();
      await start();
    },
  };
}

describe("Redis restarted empty", () => {
  it("between turns: the next turn extends the transcript the model saw", { timeout: 60_000 }, async () => {
    const { ep, h, restartEmpty } = await setUp();
    ep.fallback(answerQuestions);
    const conv = await h.open({ sweepMs: 100 });
    const key = "console:local:main:t1";
    await conv.submit(inbound(key, "first Q1"));
    await until("Q1 answered", () => saysOf(h.told, key).length === 1);

    await restartEmpty();
    await conv.submit(inbound(key, "second Q2"));
    await until("Q2 answered", () => saysOf(h.told, key).length === 2);

    expect(saysOf(h.told, key)).toEqual(["answered Q1", "answered Q2"]);
    const [, second] = requestsOf(ep, key);
    // The window held in memory came back: the first exchange is still in front of the model.
    expect(second!.messages.map((m) => contentText(m.content))).toEqual([
      "first Q1",
      "answered Q1",
      "second Q2",
    ]);
    expect(ep.violations).toEqual([]);
  });

  it("a redelivery of a message journaled before is still a duplicate", { timeout: 60_000 }, async () => {
    const { ep, h, restartEmpty } = await setUp();
    ep.fallback(answerQuestions);
    const conv = await h.open({ sweepMs: 100 });
    const key = "console:local:main:t3";
    const m1 = inbound(key, "first Q1");
    await conv.submit(m1);
    await until("Q1 answered", () => saysOf(h.told, key).length === 1);
    await restartEmpty();
    // Slack retries a delivery it saw fail; the store's claim went with Redis, this instance's did not.
    expect(await conv.submit(m1)).toEqual({ accepted: false, reason: "duplicate" });
    await conv.submit(inbound(key, "second Q2"));
    await until("Q2 answered", () => saysOf(h.told, key).length === 2);
    expect(saysOf(h.told, key)).toEqual(["answered Q1", "answered Q2"]);
  });

  it("mid-turn, with a message waiting: the turn resumes and every message is answered once", {
    timeout: 60_000,
  }, async () => {
    const { ep, h, kill, start } = await setUp();
    // The first turn's answer is held until Redis is gone; everything after answers at once.
    const release = holdFirstAnswer(ep);
    const conv = await h.open({ sweepMs: 100 });
    const key = "console:local:main:t2";
    await conv.submit(inbound(key, "first Q1"));
    await ep.waitForRequest(1);
    // Mid-turn: the model is asked beside the opening message's log write, so the turn is under
    // way once that write has landed too (a write the kill cuts is a turn that never began).
    await turnsStarted(h.store);
    await conv.submit(inbound(key, "second Q2", "bob"));

    await kill();
    release();
    await start();
    await until("Q1 and Q2 answered", () => saysOf(h.told, key).join(" ").includes("Q2"));

    const said = saysOf(h.told, key).join(" | ");
    expect(said.match(/Q1/g)).toHaveLength(1);
    expect(said.match(/Q2/g)).toHaveLength(1);
    expect(h.told.filter((t) => t.kind === "notice").map((t) => t.text)).not.toContain(
      "Sorry, something went wrong on my side and I could not finish that.",
    );
    expect(ep.violations).toEqual([]);
  });
});
