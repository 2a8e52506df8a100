import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { CUT_OFF_MARK, EMPTY_NUDGE, LENGTH_NUDGE } from "../../src/core/agent/notes.js";
import { input, testContext, testDeps } from "../support/agent-kit.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

describe("agent loop: nudges", () => {
  it("never shows a reply cut off by finish_reason=length; records it, marked, and asks again after it", async () => {
    const cut = `The full history of the Roman Empire begins with ${"the founding of the city, ".repeat(60)}`;
    ep = await startScriptedOpenAI([
      { reply: { text: cut, finishReason: "length" } },
      {
        expect: (r) => {
          // user, assistant (the cut-off reply, shortened and marked), user (the nudge): alternation kept.
          expect(r.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
          const kept = String(r.messages[1]!.content);
          expect(kept.startsWith("The full history of the Roman Empire begins with")).toBe(true);
          expect(kept.endsWith(CUT_OFF_MARK)).toBe(true);
          expect(kept.length).toBeLessThan(cut.length);
          expect(r.messages[2]).toEqual({ role: "user", content: LENGTH_NUDGE });
        },
        reply: { text: "Rome: 27 BC to AD 476 in the west." },
      },
    ]);
    const agent = createAgent(testDeps(ep));
    const ctx = testContext();
    const res = await agent.chat(input("history of Rome?"), ctx);
    expect(res).toMatchObject({ status: "answered", steps: 2 });
    expect(ctx.reporter.says).toEqual(["Rome: 27 BC to AD 476 in the west."]);
  });

  it("nudges an empty answer once, after recording it, and stops honestly if it stays empty", async () => {
    ep = await startScriptedOpenAI([
      { reply: { text: "" } },
      {
        expect: (r) =>
          expect(r.messages.slice(-2)).toEqual([
            { role: "assistant", content: "" },
            { role: "user", content: EMPTY_NUDGE },
          ]),
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
    // The second empty reply is not recorded: the nudge is followed by the honest partial.
    expect(agent.state().working.slice(-2)).toEqual([
      { role: "user", content: EMPTY_NUDGE },
      { role: "assistant", content: res.text },
    ]);
  });
});
