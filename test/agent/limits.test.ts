import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { input, testContext, testDeps, testTools } from "../support/agent-kit.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

describe("agent loop: limits end in an honest partial", () => {
  it("stops at the step budget and says what was done and what was not", async () => {
    const tools = testTools({ fetch_page: (a) => ({ content: `page ${String(a.n)}`, isError: false }) });
    ep = await startScriptedOpenAI();
    let n = 0;
    ep.fallback(() => ({ toolCalls: [{ name: "fetch_page", arguments: { n: ++n } }] }));
    const agent = createAgent(testDeps(ep, { tools, limits: { stepBudget: 4 } }));
    const ctx = testContext();
    const res = await agent.chat(input("read every page of the report"), ctx);
    expect(res.status).toBe("partial");
    expect(res.steps).toBe(4);
    expect(tools.calls).toHaveLength(4);
    expect(res.text).toMatch(/step limit \(4 steps\)/);
    expect(res.text).toContain("• fetch_page (4 ok)");
    expect(res.text).toContain("Not done: read every page of the report");
    expect(ctx.reporter.says).toEqual([res.text]);
    expect(agent.state().working.at(-1)).toEqual({ role: "assistant", content: res.text });
  });

  it("stops when the same tool-call batch is repeated noProgressStall times, without running that repeat", async () => {
    const tools = testTools({ balance: () => ({ content: "pending", isError: false }) });
    ep = await startScriptedOpenAI();
    ep.fallback(() => ({ toolCalls: [{ name: "balance", arguments: { account: "A-1" } }] }));
    const agent = createAgent(testDeps(ep, { tools, limits: { noProgressStall: 3 } }));
    const res = await agent.chat(input("wait until the balance settles"), testContext());
    expect(res.status).toBe("partial");
    // The batch ran once and was repeated twice; the third repeat is refused.
    expect(tools.calls).toHaveLength(3);
    expect(res.steps).toBe(4);
    expect(res.text).toMatch(/repeating the same call \(• balance, 4 times in a row\)/);
    expect(res.text).toContain("• balance (3 ok)");
    // The refused batch is not in the transcript: no call is left without a result.
    const calls = agent.state().working.filter((m) => m.role === "assistant" && m.tool_calls);
    expect(calls).toHaveLength(3);
  });
});
