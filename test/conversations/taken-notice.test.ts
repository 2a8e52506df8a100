/**
 * What someone is told when their message comes to an instance that is not running their thread:
 * "taken" (the acknowledgement) only when another instance holds the thread, and nothing when this
 * instance's own pass takes it. Two instances over one Redis, each with its own view.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { createHarness, type Harness, inbound, LIMITS, saysOf } from "./harness.js";
import { until } from "./worker-process.js";

const redis = await probeRedis();
const HELD = "slack:T1:C1:held";
const FREE = "slack:T1:C1:free";

describe.skipIf(!redis.ok)("the taken notice across instances", () => {
  let ep: ScriptedOpenAI | null = null;
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    await ep?.close();
    h = null;
    ep = null;
  });

  it("a message for a thread another instance is running is acknowledged there; one nobody holds is not", {
    timeout: 60_000,
  }, async () => {
    ep = await startScriptedOpenAI([
      { label: "hold", reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "t" } }] } },
    ]);
    ep.fallback(() => ({ text: "done" }));
    const hh = await createHarness(ep, { redisUrl: redis.url, prefix: uniquePrefix("conv-taken") });
    h = hh;
    const x = await hh.open(LIMITS, "x");
    const y = await hh.open(LIMITS, "y");

    await x.submit(inbound(HELD, "long job"));
    await until("x is in the tool call", () => existsSync(join(hh.dir, "t.started")));
    // x holds the thread: y's pass for this message finds the lease taken, and y says so.
    const later = inbound(HELD, "and this too", "bob");
    expect(await y.submit(later)).toEqual({ accepted: true });
    await until("the taken notice", () => hh.told.some((t) => t.kind === "queued" && t.text === later.id));
    // Nobody holds this one: y's own pass takes it and answers; nothing to acknowledge.
    expect(await y.submit(inbound(FREE, "hello"))).toEqual({ accepted: true });
    await until("the free thread answered", () => saysOf(hh.told, FREE).length === 1);

    writeFileSync(join(hh.dir, "t.open"), "");
    // x lets go, finds Bob's message in the inbox, and answers it in a turn of his own.
    await until("both answered", () => saysOf(hh.told, HELD).length === 2);
    expect(hh.told.filter((t) => t.kind === "queued").map((t) => [t.conversation, t.text])).toEqual([
      [HELD, later.id],
    ]);
  });
});
