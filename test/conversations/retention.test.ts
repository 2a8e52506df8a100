/**
 * Retention (`NEO_CONVERSATION_RETENTION_DAYS`, here about a second): a thread left idle longer
 * leaves the store whole (transcript, inbox, journal marker, lease), on both stores, and its next
 * message starts it over honestly: a request the validating endpoint accepts (a later compaction
 * marker), holding nothing said before.
 */
import { afterEach, describe, expect, it } from "vitest";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { createHarness, type Harness, inbound, requestsOf, saysOf } from "./harness.js";
import { until } from "./worker-process.js";

const redis = await probeRedis();
const A = "console:local:retained:1";
const B = "console:local:busy:1";
// Long enough for a loaded machine to journal a message and log its turn well within it.
const RETENTION_MS = 2500;

const lastUser = (req: { messages: Array<{ role: string; content?: unknown }> }) =>
  String(req.messages.filter((m) => m.role === "user").at(-1)?.content);

/** Keys that hold something of conversation `c` (its `existed` mark holds no content and is listed apart). */
const keysOf = async (h: Harness, c: string) =>
  // The dedupe claims (conv:seen:) live their own TTL, as conv:existed: does.
  (await h.store.keys("")).filter((k) => k.includes(c) && !/^conv:(existed|seen):/.test(k));

const backends = [
  { name: "file store", skip: false, opts: () => ({}) },
  {
    name: "Redis",
    skip: !redis.ok,
    opts: () => ({ redisUrl: redis.url, prefix: uniquePrefix("retention") }),
  },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(`conversation retention: ${backend.name}`, () => {
    let ep: ScriptedOpenAI;
    let h: Harness;
    afterEach(async () => {
      await h.close();
      await ep.close();
    });

    it("an idle thread's keys all go at the horizon; its next message is a valid new window", async () => {
      ep = await startScriptedOpenAI();
      ep.fallback((req) => ({ text: `re: ${lastUser(req)}` }));
      h = await createHarness(ep, backend.opts());
      // Eviction from memory comes long after the horizon: the held view must not bring the old
      // transcript back.
      const c = await h.open({ retentionMs: RETENTION_MS, idleEvictMs: 60_000 });
      await c.submit(inbound(A, "the secret plan is pelican-42"));
      await until("A answered", () => saysOf(h.told, A).length === 1);
      expect(await keysOf(h, A)).toEqual(expect.arrayContaining([`conv:inbox:{${A}}`, `conv:log:{${A}}`]));
      // B keeps talking past A's horizon: only A goes.
      let n = 0;
      await until(
        "A's keys expired",
        async () => {
          await c.submit(inbound(B, `b ${++n}`));
          await until(`B answered ${n}`, () => saysOf(h.told, B).length === n);
          return (await keysOf(h, A)).length === 0;
        },
        30_000,
      );
      expect(await h.store.length(`conv:log:{${A}}`)).toBe(0);
      expect(await h.store.length(`conv:log:{${B}}`)).toBeGreaterThan(0);

      await c.submit(inbound(A, "hello again"));
      await until("A answered again", () => saysOf(h.told, A).length === 2);
      const [first, again] = requestsOf(ep, A);
      expect(lastUser(first!)).toBe("the secret plan is pelican-42");
      expect(again!.system).toMatch(/\[compaction \d+: expired\]/);
      expect(JSON.stringify(again!.messages)).not.toContain("pelican-42");
      expect(again!.messages.filter((m) => m.role === "user")).toHaveLength(1);
      expect(ep.violations).toEqual([]);
      // The restart is itself a conversation that expires.
      expect(await keysOf(h, A)).toEqual(expect.arrayContaining([`conv:inbox:{${A}}`, `conv:log:{${A}}`]));
    });

    it("an erasure finds a person's words in a thread others kept alive past a horizon after them", async () => {
      ep = await startScriptedOpenAI();
      // Answers that do not quote her (what Neo itself wrote is kept: docs/security.md).
      ep.fallback(() => ({ text: "noted" }));
      h = await createHarness(ep, backend.opts());
      const c = await h.open({ retentionMs: RETENTION_MS, idleEvictMs: 60_000 });
      const annSpoke = Date.now();
      await c.submit(inbound(B, "ann's secret is heron-77"));
      await until("Ann answered", () => saysOf(h.told, B).length === 1);
      // Bob keeps the thread alive until more than one horizon has passed since Ann's message.
      let n = 1;
      while (Date.now() - annSpoke < RETENTION_MS * 1.5) {
        await c.submit(inbound(B, `bob ${n}`, "bob"));
        await until(`Bob answered ${n}`, () => saysOf(h.told, B).length === n + 1);
        n++;
      }
      expect(await c.erase((user) => user === "console:local:ann")).toBe(1);
      const log = JSON.stringify(await h.store.range(`conv:log:{${B}}`, 0, -1));
      expect(log).not.toContain("heron-77");
      expect(log).toContain("bob 1");
    });
  });
}
