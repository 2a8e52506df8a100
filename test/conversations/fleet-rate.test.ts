/**
 * Fair for the whole fleet (issue 31, item 3): instances sharing one store spend one turn bucket
 * per user. A burst spread over three instances starts at the configured rate (±10 %), not three
 * times it, and another user's turns are not held back by it; turns waiting at one instance are not
 * run early by the others' sweeps; each turn costs its own requester one token, whichever instance
 * runs it; and the user is told once that they are being slowed, not once per instance.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ConversationLimits, ConversationsService } from "../../src/core/conversations/types.js";
import { userTurnsKey } from "../../src/core/keys.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { createHarness, type Harness, inbound, saysOf } from "./harness.js";
import { until } from "./worker-process.js";

const redis = await probeRedis();
const lastUser = (req: { messages: Array<{ role: string; content?: unknown }> }) =>
  String(req.messages.filter((m) => m.role === "user").at(-1)?.content);
const thread = (n: string) => `console:local:c:${n}`;

describe("a user's turn rate across instances", () => {
  let ep: ScriptedOpenAI;
  let h: Harness;
  /** When each turn reached the model (its first request), by its text. */
  let started: Map<string, number>;
  afterEach(async () => {
    await h.close();
    await ep.close();
  });

  /** The endpoint answers `re: <text>` (the text `hold` names waits for `held`). */
  const start = async (opts: { redis?: boolean; hold?: string; held?: Promise<void> } = {}) => {
    ep = await startScriptedOpenAI();
    started = new Map();
    ep.fallback((req) => {
      const text = lastUser(req);
      if (!started.has(text)) started.set(text, performance.now());
      return text === opts.hold && opts.held
        ? { text: `re: ${text}`, stream: { beforeDelta: () => opts.held! } }
        : { text: `re: ${text}` };
    });
    h = await createHarness(
      ep,
      opts.redis ? { redisUrl: redis.url, prefix: uniquePrefix("fleet-rate") } : {},
    );
  };
  const open = (userTurns: ConversationLimits["userTurns"], ids: string[], extra = {}) =>
    Promise.all(ids.map((id) => h.open({ maxConcurrentTurns: 4, userTurns, ...extra }, id)));
  const answeredOnce = (keys: string[]) =>
    until("every turn answered", () => keys.every((t) => saysOf(h.told, t).length === 1), 20_000);
  /** Turns a minute between the first and the last of these starts. */
  const ratePerMinute = (at: number[]) => ((at.length - 1) * 60_000) / (Math.max(...at) - Math.min(...at));

  it.skipIf(!redis.ok)(
    "starts a burst spread over 3 instances on Redis at the configured rate, and another user's turns meanwhile",
    async () => {
      await start({ redis: true });
      // 300 turns a minute from a bucket of one: a turn every 200 ms once the first has started. (At
      // 600, one turn reaching the model 150 ms late on a loaded machine moved the measured rate 10 %.)
      const rate = { perMinute: 300, burst: 1 };
      const fleet: ConversationsService[] = await open(rate, ["i1", "i2", "i3"]);
      const aliceTurns = 16;
      const keys = Array.from({ length: aliceTurns }, (_, i) => thread(`a${i + 1}`));
      for (const [i, key] of keys.entries())
        await fleet[(i + 1) % 3]!.submit(inbound(key, `alice ${i + 1}`, "alice"));
      const bobAt = performance.now();
      await fleet[1]!.submit(inbound(thread("b1"), "bob 1", "bob"));
      await fleet[2]!.submit(inbound(thread("b2"), "bob 2", "bob"));
      await answeredOnce([...keys, thread("b1"), thread("b2")]);

      const alice = [...started].filter(([t]) => t.startsWith("alice")).map(([, at]) => at);
      expect(alice).toHaveLength(aliceTurns);
      // The first turn took the one token of the burst; each later one waited for the refill.
      expect(ratePerMinute(alice)).toBeGreaterThanOrEqual(rate.perMinute * 0.9);
      expect(ratePerMinute(alice)).toBeLessThanOrEqual(rate.perMinute * 1.1);
      // Bob's two turns (his own bucket: one now, one 200 ms later) did not wait behind Alice's line:
      // while Bob waited for his second, Alice's line moved on by a turn or two (one each 200 ms),
      // not by what was left of it. (Counted from Bob's first message, not by position in Alice's
      // line: on a loaded machine her 16 messages take a while to submit and her turns start meanwhile.)
      const bob2 = started.get("bob 2")!;
      const meanwhile = alice.filter((at) => at > bobAt && at < bob2);
      expect(
        meanwhile.length,
        `Alice's turns started while Bob waited: ${meanwhile.length}`,
      ).toBeLessThanOrEqual(3);
    },
  );

  it("starts turns waiting at one instance at the user's rate, not early by another that does not know whose they are", async () => {
    await start();
    // A token every 250 ms from a bucket of one; the other two instances sweep the store often.
    const rate = { perMinute: 240, burst: 1 };
    const [first] = await open(rate, ["i1"]);
    await open(rate, ["i2", "i3"], { sweepMs: 20 });
    const keys = Array.from({ length: 6 }, (_, i) => thread(`s${i + 1}`));
    for (const [i, key] of keys.entries()) await first!.submit(inbound(key, `alice ${i + 1}`, "alice"));
    await answeredOnce(keys);
    expect(started.size).toBe(keys.length);
    expect(ratePerMinute([...started.values()])).toBeLessThanOrEqual(rate.perMinute * 1.1);
    // Answered exactly once each, whoever ran them.
    for (const [i, key] of keys.entries()) expect(saysOf(h.told, key)).toEqual([`re: alice ${i + 1}`]);
  });

  it("charges Bob's message in Alice's thread, taken in at another instance, to Bob once and to Alice not at all", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    await start({ hold: "alice in shared", held });
    // Two turns each, refilled too slowly to matter here: what is left is what was charged.
    const rate = { perMinute: 1, burst: 2 };
    const [i1, i2] = await open(rate, ["i1", "i2"]);
    await i1!.submit(inbound(thread("shared"), "alice in shared", "alice"));
    await until("Alice's turn at the model", () => started.has("alice in shared"), 10_000);
    // i2 takes Bob's token with its try for the conversation, which i1 holds: i1 runs his turn.
    await i2!.submit(inbound(thread("shared"), "bob in shared", "bob"));
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

  it("tells a user held back on several instances once for the whole fleet, not once per instance", async () => {
    await start();
    // A token every 250 ms from a bucket of one: all but her first turn wait, on every instance.
    const fleet = await open({ perMinute: 240, burst: 1 }, ["i1", "i2", "i3"]);
    const keys = Array.from({ length: 9 }, (_, i) => thread(`t${i + 1}`));
    for (const [i, key] of keys.entries())
      await fleet[i % 3]!.submit(inbound(key, `alice ${i + 1}`, "alice"));
    await answeredOnce(keys);
    const slowed = h.told.filter((t) => t.kind === "notice" && t.text.includes("sent me a lot at once"));
    expect(slowed).toHaveLength(1);
  });
});
