import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { KNOWLEDGE } from "../../src/core/agent/prompt.js";
import { ann, input, recordingMemory, testContext, testDeps, testTools } from "../support/agent-kit.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

describe("agent loop: answering", () => {
  it("answers through Say with a fresh system block, records every message, then writes back", async () => {
    const memory = recordingMemory({
      pinned: "User prefers metric units.",
      recalled: "",
      retrieved: "Ann lives in Oslo.",
      patterns: "",
    });
    ep = await startScriptedOpenAI([
      {
        expect: (r) => {
          expect(r.system).toContain(KNOWLEDGE.slice(0, 40));
          expect(r.system).toContain("User prefers metric units.");
          expect(r.system).toContain("Active goal: weather in Oslo?");
          expect(r.system).toContain("Ann lives in Oslo.");
          expect(r.system).toMatch(/\[context: \d+% used\]$/);
          expect(r.messages).toEqual([{ role: "user", content: "weather in Oslo?" }]);
        },
        reply: { text: "It is 4 °C." },
      },
    ]);
    const deps = testDeps(ep, { memory });
    const billed: Array<string | undefined> = [];
    deps.ledger.onRecord((e) => billed.push(e.tags.user));
    const agent = createAgent(deps);
    const ctx = testContext();
    const res = await agent.chat(input("weather in Oslo?"), ctx);
    expect(res).toMatchObject({ status: "answered", text: "It is 4 °C.", steps: 1, consumed: 1 });
    expect(ctx.reporter.says).toEqual(["It is 4 °C."]);
    expect(ctx.events.map((e) => e.type)).toEqual(["message", "message"]);
    expect(agent.state().working).toHaveLength(2);
    expect(memory.faults).toHaveLength(1);
    expect(memory.faults[0]).toMatchObject({ user: ann.userKey, query: "weather in Oslo?" });
    expect(memory.writeBacks).toHaveLength(1);
    expect(memory.writeBacks[0]!.transcript).toHaveLength(2);
    expect(billed).toEqual([ann.userKey]);
  });

  it("prefixes speakers in shared threads and injects queued messages after tool results", async () => {
    const ctx = testContext({ shared: true });
    // The requester writes again while the tool runs: it joins at the next cancellation point.
    const tools = testTools({
      lookup: () => {
        ctx.inbox.push(input("also y please"));
        return { content: "42", isError: false };
      },
    });
    ep = await startScriptedOpenAI([
      { reply: { toolCalls: [{ name: "lookup", arguments: {} }] } },
      {
        expect: (r) => {
          expect(r.messages[0]).toEqual({ role: "user", content: "Ann: what is x?" });
          expect(r.messages.at(-1)).toEqual({ role: "user", content: "Ann: also y please" });
        },
        reply: { text: "x is 42" },
      },
    ]);
    const agent = createAgent(testDeps(ep, { tools }));
    const res = await agent.chat(input("what is x?"), ctx);
    expect(res).toMatchObject({ status: "answered", consumed: 2, steps: 2 });
    expect(ctx.reporter.statuses).toEqual(["• lookup"]);
    // Each transcript message keeps its speaker (never sent: the request above has role and content only).
    const users = ctx.events.flatMap((e) =>
      e.type === "message" && e.message.role === "user" ? [e.message] : [],
    );
    expect(users.map((m) => m.speaker)).toEqual([ann, ann]);
  });

  it("answers messages queued before the turn started in that one turn (one request)", async () => {
    ep = await startScriptedOpenAI([
      {
        expect: (r) => expect(r.messages).toEqual([{ role: "user", content: "one\n\ntwo\n\nthree" }]),
        reply: { text: "all three" },
      },
    ]);
    const agent = createAgent(testDeps(ep));
    const ctx = testContext();
    ctx.inbox.push(input("two"), input("three"));
    const res = await agent.chat(input("one"), ctx);
    expect(res).toMatchObject({ status: "answered", consumed: 3, steps: 1 });
    expect(ep.requests).toHaveLength(1);
  });

  it("re-faults memory every refaultEvery steps with the user input plus the latest narration", async () => {
    const memory = recordingMemory();
    const tools = testTools({ step: () => ({ content: "ok", isError: false }) });
    ep = await startScriptedOpenAI();
    let n = 0;
    ep.fallback(() =>
      ++n <= 4
        ? { text: `narration ${n}`, toolCalls: [{ name: "step", arguments: { n } }] }
        : { text: "done" },
    );
    const agent = createAgent(testDeps(ep, { tools, memory, limits: { refaultEvery: 2 } }));
    await agent.chat(input("do it"), testContext());
    expect(memory.faults.map((f) => f.query)).toEqual(["do it", "do it\nnarration 2", "do it\nnarration 4"]);
  });

  it("sends each step the memory page of the latest fault (a re-fault's page replaces the block's memory)", async () => {
    const memory = recordingMemory();
    const fault = memory.fault;
    memory.fault = async (req) => ({ ...(await fault(req)), retrieved: `fact ${memory.faults.length}` });
    const tools = testTools({ step: () => ({ content: "ok", isError: false }) });
    ep = await startScriptedOpenAI();
    let n = 0;
    ep.fallback(() => (++n <= 4 ? { toolCalls: [{ name: "step", arguments: { n } }] } : { text: "done" }));
    const agent = createAgent(testDeps(ep, { tools, memory, limits: { refaultEvery: 2 } }));
    await agent.chat(input("do it"), testContext());
    const facts = ep.requests.map((r) => /fact \d+/.exec(r.system)?.[0]);
    expect(facts).toEqual(["fact 1", "fact 1", "fact 2", "fact 2", "fact 3"]);
  });

  it("keeps the transcript valid across turns (the endpoint checks the prefix on every request)", async () => {
    ep = await startScriptedOpenAI([{ reply: { text: "one" } }, { reply: { text: "two" } }]);
    const agent = createAgent(testDeps(ep));
    await agent.chat(input("first"), testContext());
    await agent.chat(input("second"), testContext());
    expect(ep.requests[1]!.messages.map((m) => m.content)).toEqual(["first", "one", "second"]);
  });
});
