import { afterEach, describe, expect, it } from "vitest";
import { createAgent, EMPTY_NUDGE, LENGTH_NUDGE } from "../../src/core/agent/agent.js";
import { input, testContext, testDeps } from "../support/agent-kit.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

describe("agent loop: nudges", () => {
  it("never shows a reply cut off by finish_reason=length; asks again, more compactly", async () => {
    ep = await startScriptedOpenAI([
      { reply: { text: "The full history of the Roman Empire begins with", finishReason: "length" } },
      {
        expect: (r) => expect(r.messages.at(-1)).toEqual({ role: "user", content: LENGTH_NUDGE }),
        reply: { text: "Rome: 27 BC to AD 476 in the west." },
      },
    ]);
    const agent = createAgent(testDeps(ep));
    const ctx = testContext();
    const res = await agent.chat(input("history of Rome?"), ctx);
    expect(res).toMatchObject({ status: "answered", steps: 2 });
    expect(ctx.reporter.says).toEqual(["Rome: 27 BC to AD 476 in the west."]);
    expect(JSON.stringify(agent.state().working)).not.toContain("begins with");
  });

  it("nudges an empty answer once, and stops honestly if it stays empty", async () => {
    ep = await startScriptedOpenAI([
      { reply: { text: "" } },
      {
        expect: (r) => expect(r.messages.at(-1)).toEqual({ role: "user", content: EMPTY_NUDGE }),
        reply: { text: "Here it is." },
      },
      { reply: { text: "  " } },
      { reply: { text: null } },
    ]);
    const agent = createAgent(testDeps(ep));
    const first = testContext();
    expect(await agent.chat(input("go"), first)).toMatchObject({
      status: "answered",
      text: "Here it is.",
      steps: 2,
    });
    const second = testContext();
    const res = await agent.chat(input("again"), second);
    expect(res).toMatchObject({ status: "partial", steps: 2 });
    expect(res.text).toMatch(/could not produce an answer/);
    expect(second.reporter.says).toEqual([res.text]);
  });
});
