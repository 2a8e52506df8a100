/**
 * One process: the slot limit and its queue, cancel, reset, idle eviction and rebuild, the recall
 * window on rebuild, and shutdown followed by a resume on the next start.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createConversations } from "../../src/core/conversations/create-conversations.js";
import { InboundMessageError, RESUME_NOTE } from "../../src/core/conversations/inbound.js";
import type { InboundMessage } from "../../src/core/conversations/types.js";
import type { AnswerKey } from "../../src/core/reporter.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { createHarness, type Harness, inbound, LIMITS, requestsOf, saysOf } from "./harness.js";
import { until } from "./worker-process.js";

const A = "console:local:a:1";
const B = "console:local:b:1";
const C = "console:local:c:1";

const lastUser = (req: { messages: Array<{ role: string; content?: unknown }> }) =>
  String(req.messages.filter((m) => m.role === "user").at(-1)?.content);

describe("conversations on one process", () => {
  let ep: ScriptedOpenAI;
  let h: Harness;
  afterEach(async () => {
    await h.close();
    await ep.close();
  });

  async function setup(): Promise<void> {
    ep = await startScriptedOpenAI();
    ep.fallback((req) => ({ text: `re: ${lastUser(req)}` }));
    h = await createHarness(ep);
  }

  it("runs threads up to the slot limit; the rest wait in order and are told they are queued", async () => {
    await setup();
    ep.script({
      match: (r) => lastUser(r) === "hold",
      reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "slot" } }] },
    });
    const c = await h.open({ maxConcurrentTurns: 1 });
    await c.submit(inbound(A, "hold"));
    await until("A is in its tool call", () => existsSync(join(h.dir, "slot.started")));
    await c.submit(inbound(B, "b"));
    await c.submit(inbound(C, "c"));
    await until("B and C wait for a slot", () => c.stats().waitingForSlot === 2);
    const queuedStatus = h.told.filter((t) => t.kind === "status" && t.text.startsWith("Queued"));
    expect(queuedStatus.map((t) => [t.conversation, t.text])).toEqual([
      [B, "Queued: 1 conversation is ahead of this one. I'll start as soon as a slot frees up."],
      [C, "Queued: 2 conversations are ahead of this one. I'll start as soon as a slot frees up."],
    ]);
    expect(requestsOf(ep, B)).toHaveLength(0);
    writeFileSync(join(h.dir, "slot.open"), "");
    await until("all answered", () => saysOf(h.told, C).length === 1);
    const order = ep.requests.map((r) => lastUser(r));
    expect(order.indexOf("b")).toBeLessThan(order.indexOf("c"));
    expect(order.indexOf("b")).toBeGreaterThan(order.lastIndexOf("hold"));
  });

  it("cancel stops a turn in the middle of a tool call at once; the thread goes on", async () => {
    await setup();
    ep.script({
      match: (r) => lastUser(r) === "slow job",
      reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "never" } }] },
    });
    const c = await h.open();
    await c.submit(inbound(A, "slow job"));
    await until("in the tool call", () => existsSync(join(h.dir, "never.started")));
    const cancelledAt = performance.now();
    expect(await c.cancel(A)).toBe(true);
    await until("the turn stopped", () => c.stats().running === 0);
    console.log(`cancel: turn stopped ${(performance.now() - cancelledAt).toFixed(0)} ms after cancel()`);
    expect(existsSync(join(h.dir, "never.open"))).toBe(false);
    expect(await c.cancel(A)).toBe(false);
    await c.submit(inbound(A, "next"));
    await until("next answered", () => saysOf(h.told, A).includes("re: next"));
    expect(saysOf(h.told, A)).toEqual(["re: next"]);
  });

  it("posts an answer that was logged but never posted when the process died in between, under the same key", async () => {
    await setup();
    // The first process logs the answer, then hangs in the post, and is abandoned (a kill).
    const said: string[] = [];
    const keys: (AnswerKey | undefined)[] = [];
    type Say = (text: string, key?: AnswerKey) => Promise<void>;
    const ioWith = (say: Say) => () => ({
      reporter: { say, status: async () => {}, notice: async () => {} },
      approvals: { present: async () => undefined, update: async () => {} },
    });
    const open = async (say: Say) => {
      const c = createConversations({
        store: h.store,
        newAgent: h.deps.newAgent,
        io: ioWith(say),
        instanceId: "crashy",
        limits: { ...LIMITS, leaseMs: 1000, sweepMs: 200 },
      });
      await c.start();
      return c;
    };
    const first = await open((_text, key) => {
      keys.push(key);
      return new Promise<void>(() => {});
    });
    const question = inbound(A, "question");
    await first.submit(question);
    // Say is called only after the answer is logged: the first process is now stuck in the post.
    await until("the turn sits in the post, its answer logged", () => keys.length === 1);
    expect(first.stats().running).toBe(1);
    // The next process (same instance id, as after a restart) finds the turn open with its answer.
    const second = await open(async (text, key) => {
      said.push(text);
      keys.push(key);
    });
    await until("the answer is posted", () => said.length === 1);
    expect(said).toEqual(["re: question"]);
    // Both attempts name the answer by the turn's opening message; the second says it may be
    // posted already (Discord's nonce and Slack's message metadata then show it once).
    expect(keys).toEqual([{ id: question.id }, { id: question.id, resumed: true }]);
    expect(ep.requests.filter((r) => lastUser(r) === "question")).toHaveLength(1);
    await second.shutdown(1000);
  });

  it("answers a message journaled while the finished pass looks at the inbox one last time (no sweep needed)", async () => {
    await setup();
    // The real store, with one interleaving made certain: the pass's last look at the inbox (the
    // command that lets go of the lease and reads the inbox's length) is run by the store before the
    // next message is journaled, and its answer arrives after — as Redis runs that command sent just
    // before another client's append.
    let conversations: Awaited<ReturnType<typeof createConversations>> | undefined;
    let answered = false;
    const late = inbound(A, "late");
    const store: typeof h.store = {
      ...h.store,
      // The lease let go after the first answer, with the pass's last look at the inbox.
      batch: (async (steps: Parameters<typeof h.store.batch>[0]) => {
        const out = await h.store.batch(steps);
        const letGo = steps.some((s) => s.op === "deleteIfEquals" && s.key.startsWith("conv:lock:"));
        if (answered && letGo) {
          answered = false;
          await conversations!.submit(late);
        }
        return out;
      }) as typeof h.store.batch,
    };
    const c = createConversations({
      store,
      newAgent: h.deps.newAgent,
      io: () => ({
        reporter: {
          say: async (text) => {
            h.told.push({ conversation: A, kind: "say", text });
            answered = text === "re: first";
          },
          status: async () => {},
          notice: async () => {},
        },
        approvals: { present: async () => undefined, update: async () => {} },
      }),
      instanceId: "solo",
      // No sweep in this test: only the pass itself can find the late message.
      limits: { ...LIMITS, sweepMs: 3_600_000 },
    });
    conversations = c;
    await c.start();
    await c.submit(inbound(A, "first"));
    await until("the late message is answered", () => saysOf(h.told, A).includes("re: late"));
    expect(saysOf(h.told, A)).toEqual(["re: first", "re: late"]);
    await c.shutdown(1000);
  });

  it("refuses a malformed message before journaling anything", async () => {
    await setup();
    const c = await h.open();
    const bad = { ...inbound(A, "x"), speaker: undefined } as unknown as InboundMessage;
    await expect(c.submit(bad)).rejects.toBeInstanceOf(InboundMessageError);
    await expect(c.submit(bad)).rejects.toThrow(/^inbound message: speaker:/);
    expect(await h.store.keys("conv:")).toEqual([]);
  });

  it("reset starts the thread over", async () => {
    await setup();
    const c = await h.open();
    await c.submit(inbound(A, "first"));
    await until("first answered", () => saysOf(h.told, A).length === 1);
    await c.reset(A);
    await c.submit(inbound(A, "again"));
    await until("again answered", () => saysOf(h.told, A).length === 2);
    const last = requestsOf(ep, A).at(-1)!;
    expect(last.messages).toEqual([{ role: "user", content: "again" }]);
    expect(last.system).toContain("[compaction 1: reset]");
  });

  it("compacts a thread on request and persists the compaction, so a rebuild sees the same window", async () => {
    await setup();
    const c = await h.open({ idleEvictMs: 30 });
    await c.submit(inbound(A, "one"));
    await until("one answered", () => saysOf(h.told, A).length === 1);
    await c.compact(A);
    await until("evicted", () => c.stats().active === 0);
    await c.submit(inbound(A, "two"));
    await until("two answered", () => saysOf(h.told, A).length === 2);
    expect(requestsOf(ep, A).at(-1)!.system).toContain("[compaction 1: manual]");
    expect(h.told.some((t) => t.conversation === A && t.kind === "notice")).toBe(true);
  });

  it("evicts an idle conversation from memory and rebuilds exactly its transcript from the store", async () => {
    await setup();
    const c = await h.open({ idleEvictMs: 30 });
    await c.submit(inbound(A, "one"));
    await until("one answered", () => saysOf(h.told, A).length === 1);
    await until("evicted", () => c.stats().active === 0);
    await c.submit(inbound(A, "two"));
    await until("two answered", () => saysOf(h.told, A).length === 2);
    // The endpoint checked the prefix; the rebuilt request carries the whole earlier exchange.
    expect(
      requestsOf(ep, A)
        .at(-1)!
        .messages.map((m) => m.content),
    ).toEqual(["one", "re: one", "two"]);
  });

  it("keeps only the last recallTurns turns when it rebuilds a longer conversation", async () => {
    await setup();
    const c = await h.open({ idleEvictMs: 30, recallTurns: 2 });
    for (const text of ["u1", "u2", "u3", "u4"]) {
      const n = saysOf(h.told, A).length;
      await c.submit(inbound(A, text));
      await until(`${text} answered`, () => saysOf(h.told, A).length === n + 1);
      await until("evicted", () => c.stats().active === 0);
    }
    const last = requestsOf(ep, A).at(-1)!;
    expect(last.messages.map((m) => m.content)).toEqual(["u2", "re: u2", "u3", "re: u3", "u4"]);
    expect(last.system).toContain("[compaction 1: recall]");
  });

  it("shutdown cuts a running turn; the next start resumes and finishes it exactly once", async () => {
    await setup();
    ep.script({
      match: (r) => lastUser(r) === "long job",
      reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "sd" } }] },
    });
    const first = await h.open();
    await first.submit(inbound(A, "long job"));
    await until("in the tool call", () => existsSync(join(h.dir, "sd.started")));
    await first.shutdown(5000);
    expect(await first.submit(inbound(A, "late"))).toEqual({ accepted: false, reason: "shutting_down" });
    expect(saysOf(h.told, A)).toEqual([]);

    const second = await h.open();
    await until("resumed turn answered", () => saysOf(h.told, A).length === 1);
    expect(saysOf(h.told, A)).toEqual([`re: ${RESUME_NOTE}`]);
    await until("idle", () => second.stats().running === 0);
    expect(requestsOf(ep, A).filter((r) => lastUser(r) === "long job")).toHaveLength(1);
  });
});
