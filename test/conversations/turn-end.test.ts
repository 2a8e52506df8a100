/**
 * A turn's end lets go of the conversation in the command that logs it, unless a message came while
 * it ran: then the "has work" marker and the lease stay (a crash right after leaves the message to
 * the sweep, not lost), and the holder answers it. Two instances over one Redis; the interleaving
 * is made certain by journaling the other instance's message just before the end's command.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createConversations } from "../../src/core/conversations/create-conversations.js";
import { hashTag } from "../../src/core/keys.js";
import type { Store } from "../../src/store/types.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { createHarness, type Harness, inbound, LIMITS, saysOf } from "./harness.js";
import { until } from "./worker-process.js";

const redis = await probeRedis();
const CONV = "slack:T1:C1:end";

describe.skipIf(!redis.ok)("a turn's end", () => {
  let ep: ScriptedOpenAI | null = null;
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    await ep?.close();
    h = null;
    ep = null;
  });

  it("keeps the marker and the lease when a message came from another instance as it ended, and answers it", {
    timeout: 60_000,
  }, async () => {
    ep = await startScriptedOpenAI();
    ep.fallback((req) => ({ text: `re: ${String(req.messages.at(-1)?.content)}` }));
    const hh = await createHarness(ep, { redisUrl: redis.url, prefix: uniquePrefix("conv-end") });
    h = hh;
    const y = await hh.open(LIMITS, "y");
    const late = inbound(CONV, "late", "bob");
    const after: { marker: unknown; lock: unknown }[] = [];
    let armed = true;
    const store: Store = {
      ...hh.store,
      // The end's command (it clears the marker when nothing came): y journals first.
      batch: (async (steps: Parameters<Store["batch"]>[0]) => {
        const ending = steps.some((s) => s.op === "take" && s.key.startsWith("conv:pending:"));
        if (!(armed && ending)) return hh.store.batch(steps);
        armed = false;
        expect(await y.submit(late)).toEqual({ accepted: true });
        const out = await hh.store.batch(steps);
        after.push({
          marker: await hh.store.get(`conv:pending:${hashTag(CONV)}`),
          lock: await hh.store.get(`conv:lock:${hashTag(CONV)}`),
        });
        return out;
      }) as Store["batch"],
    };
    const x = createConversations({
      store,
      newAgent: hh.deps.newAgent,
      io: (conversation) => ({
        reporter: {
          say: async (text) => {
            hh.told.push({ conversation, kind: "say", text });
          },
          status: async () => {},
          notice: async () => {},
        },
        approvals: { present: async () => undefined, update: async () => {} },
      }),
      instanceId: "x",
      // No sweep: only x's pass can answer the late message.
      limits: { ...LIMITS, sweepMs: 3_600_000 },
    });
    await x.start();
    try {
      await x.submit(inbound(CONV, "first"));
      await until("both answered", () => saysOf(hh.told, CONV).length === 2);
      expect(saysOf(hh.told, CONV)).toEqual(["re: first", "re: late"]);
      expect(after).toHaveLength(1);
      expect(after[0]!.marker).toBe(1);
      expect(String(after[0]!.lock)).toMatch(/^x#/);
      // Then x's last turn ended with nothing new: the marker and the lease went with it.
      await until("x idle", () => x.stats().running === 0);
      await until("let go", async () => (await hh.store.get(`conv:lock:${hashTag(CONV)}`)) === undefined);
      expect(await hh.store.get(`conv:pending:${hashTag(CONV)}`)).toBeUndefined();
    } finally {
      await x.shutdown(1000);
    }
  });
});
