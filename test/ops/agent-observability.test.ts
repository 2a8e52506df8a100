/**
 * The loop's own counters and its one line per turn, for every way a turn ends (answered, partial,
 * cancelled, failed, stopped by the USD budget), and compactions by reason and result (summary, or the safe tail when the
 * summarizer fails). Real loop, real openai SDK against the scripted endpoint.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { createFileStore } from "../../src/store/file-store.js";
import { input, testContext, testDeps, testTools } from "../support/agent-kit.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { captureLogs, delta, type LogCapture, snapshot } from "./support/observe.js";

let ep: ScriptedOpenAI | undefined;
let logs: LogCapture | undefined;
afterEach(async () => {
  logs?.stop();
  logs = undefined;
  await ep?.close();
  ep = undefined;
});

const isCompaction = (r: ScriptedRequest) => r.purpose === "compaction";
const SUMMARY =
  "GOAL: check the weather\nDECISIONS: none\nARTIFACTS: none\nOPEN: none\nLAST_RESULTS: 4 C\nNEXT: wait";

describe("ops: agent loop metrics and turn lines", () => {
  it("counts each turn by how it ended, with one info line per turn carrying the conversation", async () => {
    ep = await startScriptedOpenAI();
    const tools = testTools({ weather: () => ({ content: "4 °C", isError: false }) });
    const deps = testDeps(ep, { tools, limits: { stepBudget: 1 } });
    const before = await snapshot();
    logs = captureLogs();

    ep.script({ reply: { text: "Hello.", usage: { prompt: 100, completion: 5 } } });
    const answered = testContext({ conversation: "console:local:tty:answered" });
    expect((await createAgent(deps).chat(input("hi"), answered)).status).toBe("answered");

    // The step budget (1) runs out after a tool call: an honest partial.
    ep.script({ reply: { toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] } });
    const partial = testContext({ conversation: "console:local:tty:partial" });
    expect((await createAgent(deps).chat(input("weather?"), partial)).status).toBe("partial");

    const cancelled = testContext({ conversation: "console:local:tty:cancelled" });
    cancelled.controller.abort();
    expect((await createAgent(deps).chat(input("never mind"), cancelled)).status).toBe("cancelled");

    ep.script({ reply: { kind: "error", status: 500, message: "down" } });
    const failed = testContext({ conversation: "console:local:tty:failed" });
    expect((await createAgent(deps).chat(input("hello?"), failed)).status).toBe("failed");

    const d = delta(before, await snapshot());
    for (const status of ["answered", "partial", "cancelled", "failed"]) {
      expect(d("neo_turns_total", { status }), status).toBe(1);
    }
    // answered 1 call, partial 1, cancelled 0, failed 1 (the call that failed is still a step).
    expect(d("neo_steps_total")).toBe(3);

    const lines = logs.info("turn ended");
    expect(lines.map((l) => [l.conversation, l.status, l.steps])).toEqual([
      ["console:local:tty:answered", "answered", 1],
      ["console:local:tty:partial", "partial", 1],
      ["console:local:tty:cancelled", "cancelled", 0],
      ["console:local:tty:failed", "failed", 1],
    ]);
    expect(lines[0]!.tokens).toBe(105);
    for (const l of lines) expect(typeof l.durationMs).toBe("number");
  });

  it("counts a turn the USD budget stopped as partial, not failed, and makes no request", async () => {
    ep = await startScriptedOpenAI();
    const store = await createFileStore({
      dataDir: mkdtempSync(join(tmpdir(), "neo-refused-")),
      prefix: "neo:",
    });
    // $1 per million tokens: 155 tokens are $0.000155, over a $0.0001 budget.
    const deps = testDeps(ep, {
      env: { NEO_MODEL_PRICES: "main-model=1,1" },
      usage: { store, userDailyUsd: 0.0001 },
    });
    ep.script({ reply: { text: "Hello.", usage: { prompt: 150, completion: 5 } } });
    const spent = testContext({ conversation: "console:local:tty:spent" });
    expect((await createAgent(deps).chat(input("hi"), spent)).status).toBe("answered");
    await deps.usage!.flushed();
    const before = await snapshot();
    logs = captureLogs();

    const refused = testContext({ conversation: "console:local:tty:refused" });
    expect((await createAgent(deps).chat(input("again"), refused)).status).toBe("partial");
    expect(refused.reporter.says.join("\n")).toMatch(
      /^I stopped because your daily budget of \$0\.00010 is used up/,
    );
    expect(ep.requests).toHaveLength(1);
    const d = delta(before, await snapshot());
    expect(d("neo_turns_total", { status: "partial" })).toBe(1);
    expect(d("neo_turns_total", { status: "failed" })).toBe(0);
    expect(logs.info("turn ended").map((l) => l.status)).toEqual(["partial"]);
    await store.close();
  });

  it("counts compactions by reason and result: a summary, then the safe tail when the summarizer fails", async () => {
    ep = await startScriptedOpenAI();
    const agent = createAgent(testDeps(ep));
    const ctx = testContext({ conversation: "console:local:tty:compact" });
    ep.script({ reply: { text: "It is 4 °C." } });
    await agent.chat(input("weather in Oslo?"), ctx);
    const before = await snapshot();

    ep.script({ match: isCompaction, reply: { text: SUMMARY } });
    await agent.compact("manual", ctx);
    ep.script({ reply: { text: "Still 4 °C." } });
    await agent.chat(input("and now?"), ctx);
    ep.script({ match: isCompaction, reply: { kind: "error", status: 500, message: "summarizer down" } });
    await agent.compact("manual", ctx);

    const d = delta(before, await snapshot());
    expect(d("neo_compactions_total", { reason: "manual", result: "summary" })).toBe(1);
    expect(d("neo_compactions_total", { reason: "manual", result: "safe_tail" })).toBe(1);
  });
});
