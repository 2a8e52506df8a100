import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { CANCELLED_RESULT } from "../../src/core/agent/tool-step.js";
import { input, testContext, testDeps, testTools } from "../support/agent-kit.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

describe("agent loop: cancellation", () => {
  it("cancels at once mid-request: the in-flight HTTP request is aborted and nothing is said", async () => {
    ep = await startScriptedOpenAI([{ reply: { kind: "hang" } }, { reply: { text: "fresh start" } }]);
    const agent = createAgent(testDeps(ep));
    const ctx = testContext();
    const turn = agent.chat(input("write a long essay"), ctx);
    await ep.waitForRequest(1);
    ctx.controller.abort();
    expect(await turn).toMatchObject({ status: "cancelled", steps: 1 });
    await ep.waitForAbort(1);
    expect(ep.requests[0]!.aborted).toBe(true);
    expect(ctx.reporter.says).toEqual([]);
    // The conversation goes on from a valid transcript.
    expect((await agent.chat(input("never mind"), testContext())).text).toBe("fresh start");
  });

  it("cancels while a tool runs; every call of the batch still gets a result", async () => {
    let started: () => void = () => {};
    const toolStarted = new Promise<void>((r) => {
      started = r;
    });
    const tools = testTools({
      slow_export: (_a, signal) =>
        new Promise((_resolve, reject) => {
          started();
          signal.addEventListener("abort", () => reject(new Error("aborted")));
        }),
    });
    ep = await startScriptedOpenAI([
      { reply: { toolCalls: [{ id: "x1", name: "slow_export", arguments: {} }] } },
      {
        expect: (r) =>
          expect(r.messages.slice(-3, -1)).toEqual([
            expect.objectContaining({ role: "assistant" }),
            { role: "tool", tool_call_id: "x1", content: CANCELLED_RESULT },
          ]),
        reply: { text: "ok, stopped" },
      },
    ]);
    const agent = createAgent(testDeps(ep, { tools }));
    const ctx = testContext();
    const turn = agent.chat(input("export everything"), ctx);
    await toolStarted;
    ctx.controller.abort();
    expect((await turn).status).toBe("cancelled");
    expect(ctx.events.at(-1)).toMatchObject({
      type: "message",
      message: { role: "tool", tool_call_id: "x1" },
    });
    expect((await agent.chat(input("status?"), testContext())).status).toBe("answered");
  });
});
