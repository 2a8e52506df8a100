/**
 * Neo on a Redis Cluster (issue 31 item 4): a primary fails over to its replica in the middle of a
 * turn, with another message waiting. Every acknowledged message is answered exactly once and every
 * request the model gets is valid (the validating endpoint rejects anything else), as when a single
 * Redis restarts (store-lost.test.ts). Real loop, real openai SDK, a test-owned 3-primary cluster
 * with one replica each; the primary serving the conversation's hash slot is SIGKILLed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTag } from "../../src/core/keys.js";
import { type LocalCluster, probeRedisCluster, startRedisCluster } from "../support/redis-cluster.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { turnsStarted } from "../support/turn-started.js";
import { createHarness, type Harness, holdFirstAnswer, inbound, saysOf } from "./harness.js";

const probe = probeRedisCluster();

async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

describe.skipIf(!probe.ok)("a Redis Cluster primary fails over mid-turn", () => {
  let cluster: LocalCluster;
  let ep: ScriptedOpenAI;
  let h: Harness;
  beforeAll(async () => {
    cluster = await startRedisCluster({ primaries: 3, replicas: 1, nodeTimeoutMs: 1000 });
    ep = await startScriptedOpenAI();
    h = await createHarness(ep, { redisUrl: cluster.url, redisCluster: true });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await ep?.close();
    await cluster?.stop();
  });

  it("every acknowledged message is answered once; the model sees only valid requests", {
    timeout: 60_000,
  }, async () => {
    const release = holdFirstAnswer(ep);
    const conv = await h.open({ sweepMs: 100 });
    const key = "console:local:main:failover";
    await conv.submit(inbound(key, "first Q1"));
    await ep.waitForRequest(1);
    await turnsStarted(h.store);
    expect(await conv.submit(inbound(key, "second Q2", "bob"))).toMatchObject({ accepted: true });

    // The primary that holds this conversation's keys (one hash slot) dies; its replica takes over.
    const primary = await cluster.primaryOf(`neo:conv:log:${hashTag(key)}`);
    await cluster.kill(primary);
    release();
    await until("Q1 and Q2 answered", () => saysOf(h.told, key).join(" ").includes("Q2"));
    await conv.submit(inbound(key, "third Q3"));
    await until("Q3 answered", () => saysOf(h.told, key).join(" ").includes("Q3"));

    const said = saysOf(h.told, key).join(" | ");
    expect(said.match(/Q1/g)).toHaveLength(1);
    expect(said.match(/Q2/g)).toHaveLength(1);
    expect(said.match(/Q3/g)).toHaveLength(1);
    expect(h.store.healthy()).toBe(true);
    expect(ep.violations).toEqual([]);
  });
});
