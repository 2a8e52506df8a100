import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { estimateTokens } from "../../src/core/budget/estimate.js";
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

describe("agent loop: a message longer than the window can hold", () => {
  it("is cut in the middle with a marker, the user is told, and the turn (and the next) goes on", async () => {
    ep = await startScriptedOpenAI();
    ep.fallback(() => ({ text: "I read the log: the error is at the end." }));
    const agent = createAgent(testDeps(ep, { limits: { contextWindow: 4000 } }));
    const ctx = testContext();
    const lines = Array.from({ length: 4000 }, (_, i) => `line ${i}: service ok, nothing to report`);
    const log = `Why does this fail?\n${lines.join("\n")}\nFATAL: disk full on /var`;
    const res = await agent.chat(input(log), ctx);
    expect(res.status).toBe("answered");

    const [notice] = ctx.reporter.notices.filter((n) => n.startsWith("Your message is about"));
    expect(notice).toMatch(
      /^Your message is about [\d,]+ tokens, more than I can read at once \(about 1,600\), so I read its beginning and its end and skipped [\d,]+ characters in the middle\./,
    );
    // The message alone does not force a compaction before the turn's request.
    expect(ep.requests[0]!.purpose).toBe("turn");
    const sent = ep.requests[0]!.messages.find((m) => m.role === "user")!.content as string;
    expect(sent.startsWith("Why does this fail?\nline 0:")).toBe(true);
    expect(sent.endsWith("FATAL: disk full on /var")).toBe(true);
    const cut = Number(
      /\[… (\d+) characters cut from the middle: the message was longer than I can read at once\]/.exec(
        sent,
      )?.[1],
    );
    // What was kept plus what was cut is the whole message, and it fits in 40 % of the window.
    expect(log.length - cut).toBe(sent.replace(/\n\n\[… \d+ characters cut[^\]]*\]\n\n/, "").length);
    expect(estimateTokens(sent)).toBeLessThanOrEqual(1600 + 50);

    // The thread is not stuck over the window: the next message is answered, from a request that fits.
    expect((await agent.chat(input("and now?"), ctx)).status).toBe("answered");
    const next = ep.requests.filter((r) => r.purpose === "turn").at(-1)!;
    expect(estimateTokens(JSON.stringify(next.messages))).toBeLessThan(4000);
  });
});
