/**
 * The loop with a streaming Reporter: every main-model call streams (real openai SDK, scripted SSE
 * endpoint); text reaches a draft as it arrives; the core decides what a draft becomes (the answer,
 * taken back, finished as interrupted or stopped), so every adapter gets the same behaviour.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { INTERRUPTED_MARK, RETRYING_STATUS, STOPPED_MARK } from "../../src/core/agent/answer-view.js";
import { modelTroubleText } from "../../src/core/agent/model-trouble.js";
import { LlmError } from "../../src/core/llm/errors.js";
import type { OutboundFile } from "../../src/core/reporter.js";
import { ann, draftingReporter, input, testContext, testDeps, testTools } from "../support/agent-kit.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

/** Every update extends the previous one: nothing shown is taken back or shown twice. */
function onlyGrows(updates: string[]): boolean {
  return updates.every((u, i) => i === 0 || u.startsWith(updates[i - 1]!));
}

describe("agent loop: streamed answers", () => {
  it("shows the answer as it streams and finishes the draft with exactly the answer", async () => {
    const answer = "Oslo is at 4 °C today, with light rain in the afternoon.";
    ep = await startScriptedOpenAI([{ reply: { text: answer, stream: { deltas: 6 } } }]);
    const reporter = draftingReporter();
    const ctx = testContext({ reporter, answerKey: { id: "m1" } });
    const res = await createAgent(testDeps(ep)).chat(input("weather?"), ctx);
    expect(res).toMatchObject({ status: "answered", text: answer });
    expect(reporter.drafts).toHaveLength(1);
    const [d] = reporter.drafts;
    expect(d!.options).toEqual({ requester: ann.userKey, key: { id: "m1" } });
    expect(d!.updates.length).toBe(6);
    expect(onlyGrows(d!.updates)).toBe(true);
    expect(d!.updates.at(-1)).toBe(answer);
    expect(d!.finished).toBe(answer);
    expect(reporter.says).toEqual([]);
  });

  it("takes back text streamed with tool calls; the calls run and round-trip", async () => {
    const tools = testTools({ lookup: () => ({ content: "42", isError: false }) });
    ep = await startScriptedOpenAI([
      {
        reply: {
          text: "Let me look that up.",
          toolCalls: [{ id: "t1", name: "lookup", arguments: { q: "x" } }],
          stream: { deltas: 3 },
        },
      },
      {
        expect: (r) =>
          expect(r.messages.slice(1)).toEqual([
            {
              role: "assistant",
              content: "Let me look that up.",
              tool_calls: [
                { id: "t1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
              ],
            },
            { role: "tool", tool_call_id: "t1", content: "42" },
          ]),
        reply: { text: "x is 42." },
      },
    ]);
    const reporter = draftingReporter();
    const res = await createAgent(testDeps(ep, { tools })).chat(
      input("what is x?"),
      testContext({ reporter }),
    );
    expect(res.text).toBe("x is 42.");
    expect(tools.calls).toEqual([{ name: "lookup", args: { q: "x" } }]);
    expect(reporter.drafts.map((d) => [d.discarded, d.finished])).toEqual([
      [true, undefined],
      [false, "x is 42."],
    ]);
  });

  it("a stream cut mid-answer and retried: the user sees one answer, nothing shown twice", async () => {
    const answer = "The deploy finished at 14:02 and all 12 checks passed.";
    ep = await startScriptedOpenAI([
      { label: "cut", reply: { text: answer, stream: { deltas: 8, cutAfter: 3 } } },
      { label: "retry", reply: { text: answer, stream: { deltas: 5 } } },
    ]);
    const reporter = draftingReporter();
    const deps = testDeps(ep, { env: { NEO_LLM_MAX_RETRIES: "1" } });
    const res = await createAgent(deps).chat(input("deploy?"), testContext({ reporter }));
    expect(res.status).toBe("answered");
    expect(ep.requests.map((r) => r.cut)).toEqual([true, false]);
    expect(reporter.drafts).toHaveLength(1);
    expect(onlyGrows(reporter.drafts[0]!.updates)).toBe(true);
    expect(reporter.drafts[0]!.finished).toBe(answer);
    expect(reporter.statuses).toEqual([RETRYING_STATUS]);
    expect(reporter.says).toEqual([]);
  });

  it("a retry that says something else replaces the draft in place, still one answer", async () => {
    ep = await startScriptedOpenAI([
      { reply: { text: "It might be around forty-one or so", stream: { deltas: 6, cutAfter: 2 } } },
      { reply: { text: "It is 42.", stream: { deltas: 2 } } },
    ]);
    const reporter = draftingReporter();
    const deps = testDeps(ep, { env: { NEO_LLM_MAX_RETRIES: "1" } });
    await createAgent(deps).chat(input("x?"), testContext({ reporter }));
    expect(reporter.drafts).toHaveLength(1);
    const d = reporter.drafts[0]!;
    expect(d.updates[0]).toBe("It mig");
    expect(d.updates).toContain("It is 42.");
    expect(d.finished).toBe("It is 42.");
  });

  it("a stream that keeps breaking: what was shown is finished as interrupted, then the failure is said", async () => {
    const cut = { text: "The first half of an answer that never ends", stream: { deltas: 4, cutAfter: 2 } };
    ep = await startScriptedOpenAI([{ reply: cut }, { reply: cut }]);
    const reporter = draftingReporter();
    const deps = testDeps(ep, { env: { NEO_LLM_MAX_RETRIES: "1" } });
    const res = await createAgent(deps).chat(
      input("tell me"),
      testContext({ reporter, answerKey: { id: "m9" } }),
    );
    expect(res.status).toBe("failed");
    const trouble = modelTroubleText(new LlmError("LLM_STREAM_BROKEN", "x"));
    expect(reporter.drafts).toHaveLength(1);
    expect(reporter.drafts[0]!.finished).toBe(`The first half of an a\n\n${INTERRUPTED_MARK}`);
    expect(reporter.log.filter((l) => !l.startsWith("status:"))).toEqual([
      "draft",
      `finish:The first half of an a\n\n${INTERRUPTED_MARK}`,
      `say:${trouble}`,
    ]);
  });

  it("a turn cancelled while its answer streams finishes the draft with what was shown, marked stopped", async () => {
    const reporter = draftingReporter();
    const ctx = testContext({ reporter });
    ep = await startScriptedOpenAI([
      {
        reply: {
          text: "A long essay that the user stops halfway",
          stream: {
            deltas: 4,
            // Stop once the user has seen two pieces.
            beforeDelta: async (i) => {
              if (i < 2) return;
              while ((reporter.drafts[0]?.updates.length ?? 0) < 2) await new Promise((r) => setImmediate(r));
              ctx.controller.abort();
            },
          },
        },
      },
    ]);
    const res = await createAgent(testDeps(ep)).chat(input("essay"), ctx);
    expect(res.status).toBe("cancelled");
    expect(reporter.drafts).toHaveLength(1);
    expect(reporter.drafts[0]!.finished).toBe(`A long essay that th\n\n${STOPPED_MARK}`);
  });

  it("text cut by the output limit is taken back before the model is asked again", async () => {
    ep = await startScriptedOpenAI([
      { reply: { text: "A very long answer that gets cu", finishReason: "length" } },
      { reply: { text: "Short answer." } },
    ]);
    const reporter = draftingReporter();
    await createAgent(testDeps(ep)).chat(input("q"), testContext({ reporter }));
    expect(reporter.drafts.map((d) => [d.discarded, d.finished])).toEqual([
      [true, undefined],
      [false, "Short answer."],
    ]);
  });
});

describe("agent loop: an answer sent as a file while it streams", () => {
  it("the draft stops growing past the message length; the file is uploaded and the draft finished with the short message", async () => {
    const answer = Array.from({ length: 5 }, (_, i) => `Point ${i + 1}: ${"x".repeat(40)}.`).join("\n\n");
    ep = await startScriptedOpenAI([{ reply: { text: answer, stream: { deltas: 10 } } }]);
    const drafting = draftingReporter();
    const uploads: Array<{ name: string; text: string; comment: string }> = [];
    const reporter = {
      ...drafting,
      upload: async (files: readonly OutboundFile[], comment: string) => {
        drafting.log.push("upload");
        for (const f of files) uploads.push({ name: f.name, text: Buffer.from(f.bytes).toString(), comment });
      },
    };
    const ctx = testContext({ reporter });
    const deps = testDeps(ep, { limits: { answerFile: { maxChars: 100, codeLines: 0 } } });
    const res = await createAgent(deps).chat(input("list the points"), ctx);
    // The transcript and the turn keep the whole answer; the user gets it as a file.
    expect(res).toMatchObject({ status: "answered", text: answer });
    expect(uploads).toEqual([{ name: "answer.md", text: answer, comment: "" }]);
    const [d] = drafting.drafts;
    expect(d!.updates.length).toBeGreaterThan(0);
    expect(d!.updates.every((u) => u.length <= 100)).toBe(true);
    expect(d!.finished).toBe(`Point 1: ${"x".repeat(40)}.\n\n*(The full answer is attached as answer.md.)*`);
    expect(drafting.log.slice(-2)).toEqual(["upload", `finish:${d!.finished}`]);
  });
});
