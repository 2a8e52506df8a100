/**
 * Redis killed mid-turn and restarted with its data (an append-only file, as compose runs it): the
 * answer the model gave while the store was down is shown, and logged when the store is back right
 * after the question it answers, so the next request is valid and extends the one before (the
 * validating endpoint rejects anything else with a 400, which fails the turn). Real loop, real
 * openai SDK, the store on a test-owned `redis-server`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../app/support/bot-process.js";
import { killRedisServer, startRedisServer } from "../support/redis-server.js";
import { type ScriptedRequest, startScriptedOpenAI } from "../support/scripted-openai.js";
import { contentText } from "../support/transcript-checks.js";
import { turnsStarted } from "../support/turn-started.js";
import { createHarness, inbound, requestsOf, saysOf } from "./harness.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The text of the request's last user message: the question it answers. */
const asked = (req: ScriptedRequest) =>
  contentText(req.messages.filter((m) => m.role === "user").at(-1)?.content);

describe("Redis restarted with its data", () => {
  it("mid-answer: the shown answer is logged after its question; the next request extends it", {
    timeout: 60_000,
  }, async () => {
    const ep = await startScriptedOpenAI();
    cleanups.push(() => ep.close());
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "neo-store-back-"));
    let redis = await startRedisServer(port, undefined, dir);
    cleanups.push(() => killRedisServer(redis));
    const h = await createHarness(ep, { redisUrl: `redis://127.0.0.1:${port}` });
    cleanups.push(() => h.close());
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    // The first answer is held until Redis is gone: it is shown, and its log append fails.
    ep.script({ label: "Q1, held", reply: { text: "answer one", stream: { beforeDelta: () => held } } });
    ep.fallback((req) => ({ text: `re: ${asked(req)}` }));
    const conv = await h.open({ sweepMs: 100 });
    const key = "console:local:main:back";
    await conv.submit(inbound(key, "first Q1"));
    await ep.waitForRequest(1);
    await turnsStarted(h.store);

    await killRedisServer(redis);
    release();
    redis = await startRedisServer(port, undefined, dir);
    await until("the store reconnected", () => h.store.healthy());
    await until("Q1 answered", () => saysOf(h.told, key).includes("answer one"));
    await until("the turn closed", () => conv.stats().running === 0);

    await conv.submit(inbound(key, "second Q2"));
    await until("Q2 answered", () => saysOf(h.told, key).some((s) => s.includes("Q2")));
    const last = requestsOf(ep, key).at(-1)!;
    expect(last.messages.map((m) => [m.role, contentText(m.content)])).toEqual([
      ["user", expect.stringContaining("Q1")],
      ["assistant", "answer one"],
      ["user", expect.stringContaining("Q2")],
    ]);
    expect(saysOf(h.told, key)).toEqual(["answer one", expect.stringContaining("Q2")]);
    expect(ep.violations).toEqual([]);
  });
});
