/**
 * Fair share through the real conversations layer and loop (DESIGN.md, Fairness): with one user's
 * backlog queued, another user's first turn starts right after the running turn; a burst beyond a
 * user's turn rate waits for the refill, is told once, and every message is answered.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WAITING_PER_USER } from "../../src/core/conversations/backlog.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { createHarness, type Harness, inbound, saysOf } from "./harness.js";
import { until } from "./worker-process.js";

const lastUser = (req: { messages: Array<{ role: string; content?: unknown }> }) =>
  String(req.messages.filter((m) => m.role === "user").at(-1)?.content);
const thread = (n: string) => `console:local:c:${n}`;

describe("fair share of the turn slots", () => {
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

  it("starts another user's first turn right after the running one, ahead of a backlog", async () => {
    await setup();
    ep.script({
      match: (r) => lastUser(r) === "alice 0",
      reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "hold" } }] },
    });
    const c = await h.open({ maxConcurrentTurns: 1 });
    await c.submit(inbound(thread("a0"), "alice 0", "alice"));
    await until("Alice's first turn holds the slot", () => existsSync(join(h.dir, "hold.started")));
    for (let i = 1; i <= 5; i++) await c.submit(inbound(thread(`a${i}`), `alice ${i}`, "alice"));
    await c.submit(inbound(thread("b"), "bob 1", "bob"));
    await until("six turns wait", () => c.stats().waitingForSlot === 6);
    // Bob is told he is next, though five of Alice's arrived before him.
    const bobQueued = h.told.find((t) => t.conversation === thread("b") && t.kind === "status");
    expect(bobQueued?.text).toMatch(/^Queued: 1 conversation is ahead/);

    writeFileSync(join(h.dir, "hold.open"), "");
    await until("everyone answered", () => saysOf(h.told, thread("a5")).length === 1);
    // Turns in the order they started (a turn's later requests repeat its user message).
    const turns = [...new Set(ep.requests.map(lastUser))].filter((t) => /^(alice|bob) \d$/.test(t));
    // Alice's held turn, then Bob's: he waited for one running turn, no more.
    expect(turns.slice(0, 2)).toEqual(["alice 0", "bob 1"]);
    expect(turns.slice(2)).toEqual(["alice 1", "alice 2", "alice 3", "alice 4", "alice 5"]);
  });

  it("holds a burst beyond a user's turn rate, tells them once, answers everything, and not at others' expense", async () => {
    await setup();
    const c = await h.open({ maxConcurrentTurns: 4, userTurns: { perMinute: 20, burst: 1 } });
    for (let i = 1; i <= 3; i++) await c.submit(inbound(thread(`a${i}`), `alice ${i}`, "alice"));
    await c.submit(inbound(thread("b"), "bob 1", "bob"));
    await until("Bob answered", () => saysOf(h.told, thread("b")).length === 1);
    await until("all of Alice's answered", () =>
      [1, 2, 3].every((i) => saysOf(h.told, thread(`a${i}`)).length === 1),
    );
    const notices = h.told.filter((t) => t.kind === "notice" && t.text.startsWith("You've sent me a lot"));
    expect(notices).toHaveLength(1);
    expect(notices[0]!.conversation).toBe(thread("a2"));
    expect(notices[0]!.text).toMatch(/about one every 3 s .*Nothing is lost\.$/);
    // Bob's turn did not wait for Alice's tokens.
    const order = ep.requests.map(lastUser);
    expect(order.indexOf("bob 1")).toBeLessThan(order.indexOf("alice 2"));
    expect(order.indexOf("alice 2")).toBeLessThan(order.indexOf("alice 3"));
    expect(c.stats()).toMatchObject({ waitingForSlot: 0, throttledUsers: 0 });
  });

  it("keeps a flood beyond a user's in-memory line in the store only, and answers it in order", async () => {
    await setup();
    ep.script({
      match: (r) => lastUser(r) === "alice 0",
      reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "hold" } }] },
    });
    const c = await h.open({ maxConcurrentTurns: 1, userTurns: { perMinute: 60_000, burst: 1_000 } });
    await c.submit(inbound(thread("a0"), "alice 0", "alice"));
    await until("Alice's first turn holds the slot", () => existsSync(join(h.dir, "hold.started")));
    const FLOOD = WAITING_PER_USER * 3;
    for (let i = 1; i <= FLOOD; i++) await c.submit(inbound(thread(`a${i}`), `alice ${i}`, "alice"));
    await c.submit(inbound(thread("b"), "bob 1", "bob"));
    // In memory: her running thread, her line and Bob's; the rest only in the store.
    expect(c.stats().active).toBe(WAITING_PER_USER + 2);
    // Each waiting turn holds its conversation's lease first (one round trip), then joins the line.
    await until(
      "her line and Bob wait for the slot",
      () => c.stats().waitingForSlot === WAITING_PER_USER + 1,
    );
    expect(c.stats()).toMatchObject({ active: WAITING_PER_USER + 2, waitingForSlot: WAITING_PER_USER + 1 });

    writeFileSync(join(h.dir, "hold.open"), "");
    await until("all answered", () => saysOf(h.told, thread(`a${FLOOD}`)).length === 1, 20_000);
    for (let i = 0; i <= FLOOD; i++) expect(saysOf(h.told, thread(`a${i}`)), `alice ${i}`).toHaveLength(1);
    const turns = [...new Set(ep.requests.map(lastUser))].filter((t) => /^(alice|bob) \d+$/.test(t));
    // Bob right after the running turn; hers in the order she sent them, parked ones included.
    expect(turns.slice(0, 2)).toEqual(["alice 0", "bob 1"]);
    expect(turns.slice(2)).toEqual(Array.from({ length: FLOOD }, (_, i) => `alice ${i + 1}`));
  });
});
