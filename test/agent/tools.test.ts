import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { ToolTransportError } from "../../src/core/tools/types.js";
import { input, testContext, testDeps, testTools } from "../support/agent-kit.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

describe("agent loop: tool calls and the recovery ladder", () => {
  it("turns malformed tool arguments into an in-band error the model sees, without dispatching", async () => {
    const tools = testTools({ search: (a) => ({ content: `found ${String(a.q)}`, isError: false }) });
    ep = await startScriptedOpenAI([
      { reply: { toolCalls: [{ id: "c1", name: "search", arguments: '{"q": "cats"' }] } },
      {
        expect: (r) => {
          const result = r.messages.at(-1)!;
          expect(result).toMatchObject({ role: "tool", tool_call_id: "c1" });
          expect(String(result.content)).toMatch(
            /^Error: search was not called: arguments are not valid JSON/,
          );
        },
        reply: { toolCalls: [{ id: "c2", name: "search", arguments: { q: "cats" } }] },
      },
      {
        expect: (r) => expect(r.messages.at(-1)!.content).toBe("found cats"),
        reply: { text: "Cats found." },
      },
    ]);
    const agent = createAgent(testDeps(ep, { tools }));
    const res = await agent.chat(input("find cats"), testContext());
    expect(res.status).toBe("answered");
    expect(tools.calls).toEqual([{ name: "search", args: { q: "cats" } }]);
  });

  it("retries transport errors up to maxRetriesPerTool times, then hands the failure to the model", async () => {
    let attempts = 0;
    const tools = testTools({
      flaky: () => {
        attempts++;
        if (attempts <= 2) throw new ToolTransportError("socket closed", "flaky");
        return { content: "third time lucky", isError: false };
      },
      dead: () => {
        throw new ToolTransportError("server gone", "dead");
      },
    });
    ep = await startScriptedOpenAI([
      { reply: { toolCalls: [{ name: "flaky", arguments: {} }] } },
      {
        expect: (r) => expect(r.messages.at(-1)!.content).toBe("third time lucky"),
        reply: { toolCalls: [{ name: "dead", arguments: {} }] },
      },
      {
        expect: (r) =>
          expect(String(r.messages.at(-1)!.content)).toMatch(
            /dead is unavailable \(failed 4 times: server gone\)/,
          ),
        reply: { text: "dead is down" },
      },
    ]);
    const agent = createAgent(testDeps(ep, { tools, limits: { maxRetriesPerTool: 3 } }));
    const res = await agent.chat(input("go"), testContext());
    expect(res.status).toBe("answered");
    expect(attempts).toBe(3);
    expect(tools.calls.filter((c) => c.name === "dead")).toHaveLength(4); // 1 + 3 retries
  });

  it("gives the model maxAdaptAttempts chances per tool after in-band errors, then stops honestly", async () => {
    const tools = testTools({
      transfer_quote: (a) => ({ content: `unknown asset ${String(a.asset)}`, isError: true }),
      price: () => ({ content: "1.00", isError: false }),
    });
    ep = await startScriptedOpenAI();
    let n = 0;
    ep.fallback(() =>
      ++n === 2
        ? { toolCalls: [{ name: "price", arguments: {} }] }
        : { toolCalls: [{ name: "transfer_quote", arguments: { asset: `X${n}` } }] },
    );
    const agent = createAgent(testDeps(ep, { tools, limits: { maxAdaptAttempts: 2 } }));
    const ctx = testContext();
    const res = await agent.chat(input("quote a transfer"), ctx);
    expect(res.status).toBe("partial");
    expect(tools.calls.filter((c) => c.name === "transfer_quote")).toHaveLength(3); // 1 error + 2 adapt attempts
    expect(res.text).toMatch(/• transfer_quote returned errors in 3 of my attempts \(3 errors in all\)/);
    expect(res.text).toContain("• price (1 ok)");
    // The last error result is in the transcript before the partial: every call has its result.
    const last = agent.state().working.slice(-2);
    expect(last[0]).toMatchObject({ role: "tool", content: "unknown asset X4" });
  });

  it("runs a batch concurrently but appends results in call order, with one Status line per call", async () => {
    let releaseSlow: () => void = () => {};
    const slowGate = new Promise<void>((r) => {
      releaseSlow = r;
    });
    const tools = testTools({
      slow: async () => {
        await slowGate;
        return { content: "slow done", isError: false };
      },
      fast: () => {
        releaseSlow(); // proves both run at once: slow only finishes because fast started
        return { content: "fast done", isError: false };
      },
    });
    ep = await startScriptedOpenAI([
      {
        reply: {
          toolCalls: [
            { id: "a", name: "slow", arguments: {} },
            { id: "b", name: "fast", arguments: {} },
          ],
        },
      },
      {
        expect: (r) =>
          expect(r.messages.slice(-2).map((m) => [m.tool_call_id, m.content])).toEqual([
            ["a", "slow done"],
            ["b", "fast done"],
          ]),
        reply: { text: "both" },
      },
    ]);
    const agent = createAgent(testDeps(ep, { tools }));
    const ctx = testContext();
    expect((await agent.chat(input("go"), ctx)).status).toBe("answered");
    expect(ctx.reporter.statuses).toEqual(["• slow", "• fast"]);
  });
});
