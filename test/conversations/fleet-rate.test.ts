/**
 * Fair for the whole fleet (issue 31, item 3): three instances sharing one Redis, one user's burst
 * spread over all three. The user's turn bucket is in the store, so the turns start at the
 * configured rate (±10 %), not three times it, and another user's turns are not held back by it.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ConversationsService } from "../../src/core/conversations/types.js";
import { userTurnsKey } from "../../src/core/keys.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { createHarness, type Harness, inbound, saysOf } from "./harness.js";
import { until } from "./worker-process.js";

const redis = await probeRedis();
const lastUser = (req: { messages: Array<{ role: string; content?: unknown }> }) =>
  String(req.messages.filter((m) => m.role === "user").at(-1)?.content);
const thread = (n: string) => `console:local:c:${n}`;

/** 600 turns a minute from a bucket of one: a turn every 100 ms once the first has started. */
const RATE = { perMinute: 600, burst: 1 };
const ALICE_TURNS = 16;

describe.skipIf(!redis.ok)("a user's turn rate across three instances", () => {
  let ep: ScriptedOpenAI;
  let h: Harness;
  afterEach(async () => {
    await h.close();
    await ep.close();
  });

  it("starts a burst spread over 3 instances at the configured rate, and another user's turns meanwhile", async () => {
    ep = await startScriptedOpenAI();
    // When each turn reached the model (its first request).
    const started = new Map<string, number>();
    ep.fallback((req) => {
      const text = lastUser(req);
      if (!started.has(text)) started.set(text, performance.now());
      return { text: `re: ${text}` };
    });
    h = await createHarness(ep, { redisUrl: redis.url, prefix: uniquePrefix("fleet-rate") });
    const fleet: ConversationsService[] = [];
    for (const id of ["i1", "i2", "i3"])
      fleet.push(await h.open({ maxConcurrentTurns: 4, userTurns: RATE }, id));

    for (let i = 1; i <= ALICE_TURNS; i++)
      await fleet[i % 3]!.submit(inbound(thread(`a${i}`), `alice ${i}`, "alice"));
    await fleet[1]!.submit(inbound(thread("b1"), "bob 1", "bob"));
    await fleet[2]!.submit(inbound(thread("b2"), "bob 2", "bob"));
    await until(
      "every turn answered",
      () =>
        Array.from({ length: ALICE_TURNS }, (_, i) => thread(`a${i + 1}`))
          .concat(thread("b1"), thread("b2"))
          .every((t) => saysOf(h.told, t).length === 1),
      20_000,
    );

    const alice = [...started].filter(([t]) => t.startsWith("alice")).map(([, at]) => at);
    expect(alice).toHaveLength(ALICE_TURNS);
    // The first turn took the one token of the burst; each later one waited for the refill.
    const spanMs = Math.max(...alice) - Math.min(...alice);
    const perMinute = ((ALICE_TURNS - 1) * 60_000) / spanMs;
    expect(perMinute).toBeGreaterThanOrEqual(RATE.perMinute * 0.9);
    expect(perMinute).toBeLessThanOrEqual(RATE.perMinute * 1.1);
    // Bob's two turns (his own bucket: one now, one 100 ms later) did not wait behind Alice's line.
    const order = [...started.keys()];
    expect(order.indexOf("bob 2")).toBeLessThan(order.indexOf(`alice ${ALICE_TURNS / 2}`));
  });
});

describe("a user's turns waiting at one instance, seen by the others' sweeps", () => {
  let ep: ScriptedOpenAI;
  let h: Harness;
  afterEach(async () => {
    await h.close();
    await ep.close();
  });

  it("are started at the user's rate, not run by another instance that does not know whose they are", async () => {
    ep = await startScriptedOpenAI();
    const started = new Map<string, number>();
    ep.fallback((req) => {
      const text = lastUser(req);
      if (!started.has(text)) started.set(text, performance.now());
      return { text: `re: ${text}` };
    });
    h = await createHarness(ep);
    // A token every 250 ms from a bucket of one; the other two instances sweep the store often.
    const rate = { perMinute: 240, burst: 1 };
    const first = await h.open({ maxConcurrentTurns: 4, userTurns: rate }, "i1");
    for (const id of ["i2", "i3"]) await h.open({ maxConcurrentTurns: 4, userTurns: rate, sweepMs: 20 }, id);
    const turns = 6;
    for (let i = 1; i <= turns; i++) await first.submit(inbound(thread(`s${i}`), `alice ${i}`, "alice"));
    await until(
      "every turn answered once",
      () =>
        Array.from({ length: turns }, (_, i) => thread(`s${i + 1}`)).every(
          (t) => saysOf(h.told, t).length === 1,
        ),
      20_000,
    );
    const at = [...started.values()];
    expect(at).toHaveLength(turns);
    const perMinute = ((turns - 1) * 60_000) / (Math.max(...at) - Math.min(...at));
    expect(perMinute).toBeLessThanOrEqual(rate.perMinute * 1.1);
    // Answered exactly once each, whoever ran them.
    for (let i = 1; i <= turns; i++) expect(saysOf(h.told, thread(`s${i}`))).toEqual([`re: alice ${i}`]);
  });
});

describe("a turn is charged to its requester once, whichever instance runs it", () => {
  let ep: ScriptedOpenAI;
  let h: Harness;
  afterEach(async () => {
    await h.close();
    await ep.close();
  });

  it("Bob's message in Alice's thread, taken in at another instance, costs Bob one token and Alice none", async () => {
    ep = await startScriptedOpenAI();
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    ep.fallback((req) => {
      const text = lastUser(req);
      return text === "alice in shared"
        ? { text: `re: ${text}`, stream: { beforeDelta: () => held } }
        : { text: `re: ${text}` };
    });
    h = await createHarness(ep);
    // Two turns each, refilled too slowly to matter here: what is left is what was charged.
    const rate = { perMinute: 1, burst: 2 };
    const i1 = await h.open({ maxConcurrentTurns: 4, userTurns: rate }, "i1");
    const i2 = await h.open({ maxConcurrentTurns: 4, userTurns: rate }, "i2");
    await i1.submit(inbound(thread("shared"), "alice in shared", "alice"));
    await until(
      "Alice's turn at the model",
      () => ep.requests.some((r) => lastUser(r) === "alice in shared"),
      10_000,
    );
    // i2 takes Bob's token with its try for the conversation, which i1 holds: i1 runs his turn.
    await i2.submit(inbound(thread("shared"), "bob in shared", "bob"));
    release();
    await until(
      "both answered in the shared thread",
      () => saysOf(h.told, thread("shared")).length === 2,
      10_000,
    );
    expect(saysOf(h.told, thread("shared"))).toEqual(["re: alice in shared", "re: bob in shared"]);
    // Each has the second of their two tokens left (an unspent take was given back).
    const left = (who: string) => h.store.takeToken(userTurnsKey(`console:local:${who}`), rate);
    await until("Alice's second token", async () => (await left("alice")) === 0, 3000);
    await until("Bob's second token", async () => (await left("bob")) === 0, 3000);
    expect(await left("alice")).toBeGreaterThan(0);
    expect(await left("bob")).toBeGreaterThan(0);
  });
});

describe("a user held back by their rate on several instances", () => {
  let ep: ScriptedOpenAI;
  let h: Harness;
  afterEach(async () => {
    await h.close();
    await ep.close();
  });

  it("is told once for the whole fleet, not once per instance", async () => {
    ep = await startScriptedOpenAI();
    ep.fallback((req) => ({ text: `re: ${lastUser(req)}` }));
    h = await createHarness(ep);
    // A token every 250 ms from a bucket of one: all but her first turn wait, on every instance.
    const rate = { perMinute: 240, burst: 1 };
    const fleet: ConversationsService[] = [];
    for (const id of ["i1", "i2", "i3"])
      fleet.push(await h.open({ maxConcurrentTurns: 4, userTurns: rate }, id));
    const turns = 9;
    for (let i = 1; i <= turns; i++)
      await fleet[i % 3]!.submit(inbound(thread(`t${i}`), `alice ${i}`, "alice"));
    await until(
      "every turn answered",
      () =>
        Array.from({ length: turns }, (_, i) => thread(`t${i + 1}`)).every(
          (t) => saysOf(h.told, t).length === 1,
        ),
      20_000,
    );
    const slowed = h.told.filter((t) => t.kind === "notice" && t.text.includes("sent me a lot at once"));
    expect(slowed).toHaveLength(1);
  });
});
