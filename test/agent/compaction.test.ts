import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { COMPACTION_NOTICE } from "../../src/core/compaction/compact.js";
import { compactionNumber } from "../../src/core/compaction/marker.js";
import { PRESERVED_HEADING } from "../../src/core/compaction/preserved.js";
import { ann, input, testContext, testDeps, testTools } from "../support/agent-kit.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isCompaction = (r: ScriptedRequest) => r.purpose === "compaction";
const LONG_ASK = `and now? ${"Check the totals again. ".repeat(200)}`.trim();
const SUMMARY =
  "GOAL: settle the batch\nDECISIONS: pay in order\nARTIFACTS: see above\nOPEN: none\nLAST_RESULTS: fine\nNEXT: continue";

/** A realistic ~280-token tool result. */
function ledgerPage(step: number): string {
  const rows = Array.from({ length: 12 }, (_, i) => ({
    row: i,
    step,
    memo: `invoice line ${i} for batch ${step}`,
    ok: true,
  }));
  return JSON.stringify({ step, rows });
}

describe("agent loop: compaction", () => {
  it("a 25-step tool loop crosses the hard threshold and a tx hash from step 3 survives verbatim", async () => {
    const txHash = `0x${randomBytes(32).toString("hex")}`;
    const tools = testTools({
      ledger_step: (a) => {
        const step = Number(a.step);
        const body = ledgerPage(step);
        return { content: step === 3 ? `${body}\nsubmitted tx ${txHash}` : body, isError: false };
      },
    });
    ep = await startScriptedOpenAI();
    let step = 0;
    ep.fallback((r) => {
      if (isCompaction(r)) {
        expect(r.model).toBe("mini");
        return { text: SUMMARY }; // the scripted summarizer leaves the hash out
      }
      step++;
      return step <= 25
        ? { text: `step ${step}`, toolCalls: [{ name: "ledger_step", arguments: { step } }] }
        : { text: "All 25 steps done." };
    });
    const agent = createAgent(
      testDeps(ep, {
        tools,
        limits: { contextWindow: 6000, stepBudget: 40 },
        env: { NEO_CHEAP_MODEL: "mini" },
      }),
    );
    const ctx = testContext();
    const res = await agent.chat(input("run the 25-step settlement"), ctx);

    expect(res).toMatchObject({ status: "answered", steps: 26 });
    expect(ctx.reporter.notices[0]).toBe(COMPACTION_NOTICE.hard);
    const compactions = ctx.events.filter((e) => e.type === "compaction");
    expect(compactions.length).toBeGreaterThanOrEqual(1);
    expect(compactions[0]).toMatchObject({ reason: "hard" });
    const turns = ep.requests.filter(isTurn);
    expect(turns.map((r) => Number(/\[context: (\d+)% used\]/.exec(r.system)![1])).every((p) => p < 92)).toBe(
      true,
    );
    // The last request no longer carries step 3 in its messages, only in the summary, verbatim.
    const last = turns.at(-1)!;
    expect(JSON.stringify(last.messages)).not.toContain(txHash);
    expect(compactionNumber(last.system)).toBe(compactions.length);
    expect(last.system).toContain(PRESERVED_HEADING);
    expect(last.system).toContain(`- ${txHash}`);
    expect(agent.state().summary).toContain(txHash);
  });

  it("falls back to the safe tail when the summarizer fails, never splitting a call from its result", async () => {
    const tools = testTools({ dump: () => ({ content: ledgerPage(1).repeat(9), isError: false }) });
    ep = await startScriptedOpenAI([
      {
        match: isTurn,
        reply: {
          toolCalls: [{ id: "d1", name: "dump", arguments: { path: "/srv/exports/2026/batch-17.json" } }],
        },
      },
      { match: isTurn, reply: { text: "dumped" } },
      { match: isCompaction, reply: { kind: "error", status: 500 } },
      {
        match: isTurn,
        expect: (r) => {
          expect(r.messages).toEqual([{ role: "user", content: LONG_ASK }]);
          expect(r.system).toMatch(
            /\[compaction 1: hard\]\nSummary unavailable: 4 earlier messages were dropped\./,
          );
          expect(r.system).toContain("- /srv/exports/2026/batch-17.json");
        },
        reply: { text: "fresh window" },
      },
    ]);
    const agent = createAgent(testDeps(ep, { tools, limits: { contextWindow: 4000 } }));
    expect((await agent.chat(input("dump the batch"), testContext())).status).toBe("answered");
    const ctx = testContext();
    expect(await agent.chat(input(LONG_ASK), ctx)).toMatchObject({
      status: "answered",
      text: "fresh window",
    });
    expect(ctx.reporter.notices).toEqual([COMPACTION_NOTICE.hard]);
    expect(agent.state().working).toEqual([
      { role: "user", content: LONG_ASK, speaker: ann },
      { role: "assistant", content: "fresh window" },
    ]);
  });

  it("each identifier shape (short SHA, e-mail, file name, URL, tx hash) survives two compactions verbatim", async () => {
    const shapes = {
      sha: "9c1e4b7",
      longSha: "4f2a9e0c7b13",
      email: "dana.ops+billing@acme-payments.co",
      file: "settlement-2026-11.xlsx",
      url: "https://ci.example.dev/runs/88213?attempt=2",
      tx: `0x${randomBytes(32).toString("hex")}`,
    };
    const filler = ledgerPage(9).repeat(4); // pushes the result out of the kept tail
    const tools = testTools({
      build_info: () => ({
        content: `${filler}\nbuilt ${shapes.sha} (full ${shapes.longSha}); mailed ${shapes.email} the ${shapes.file}; logs at ${shapes.url}; paid in ${shapes.tx}`,
        isError: false,
      }),
    });
    ep = await startScriptedOpenAI();
    ep.fallback((r) => {
      if (isCompaction(r)) return { text: SUMMARY };
      if (r.messages.at(-1)?.role === "tool") return { text: "Build checked." };
      return String(r.messages.at(-1)?.content).includes("build")
        ? { toolCalls: [{ name: "build_info", arguments: {} }] }
        : { text: "Noted." };
    });
    const agent = createAgent(testDeps(ep, { tools, limits: { contextWindow: 4000 } }));
    const ctx = testContext();
    await agent.chat(input("check the build"), ctx);
    await agent.compact("manual", ctx);
    await agent.chat(input(`anything else? ${"Nothing urgent. ".repeat(60)}`), ctx);
    await agent.compact("manual", ctx);
    const { summary, working } = agent.state();
    expect(compactionNumber(summary)).toBe(2);
    expect(JSON.stringify(working)).not.toContain(shapes.tx);
    for (const id of Object.values(shapes)) expect(summary).toContain(`- ${id}`);
  });

  it("uses the main model to summarize when the cheap model fails, and compacts softly after an answer", async () => {
    ep = await startScriptedOpenAI([
      { match: isTurn, reply: { text: `Here is the list: ${"item, ".repeat(1500)}` } },
      { match: (r) => isCompaction(r) && r.model === "mini", reply: { kind: "error", status: 503 } },
      { match: (r) => isCompaction(r) && r.model === "main-model", reply: { text: SUMMARY } },
    ]);
    const agent = createAgent(
      testDeps(ep, { limits: { contextWindow: 4000 }, env: { NEO_CHEAP_MODEL: "mini" } }),
    );
    const ctx = testContext();
    expect((await agent.chat(input("list everything"), ctx)).status).toBe("answered");
    expect(ctx.reporter.notices).toEqual([COMPACTION_NOTICE.soft]);
    expect(ctx.reporter.says).toHaveLength(1);
    expect(agent.state().summary).toMatch(/^\[compaction 1: soft\]\nGOAL: settle the batch/);
    expect(ep.requests.filter(isCompaction).map((r) => r.model)).toEqual(["mini", "main-model"]);
  });
});

describe("agent loop: the endpoint says the request is over the model's window", () => {
  const TOO_LONG = {
    kind: "error" as const,
    status: 400,
    code: "context_length_exceeded",
    message: "This model's maximum context length is 8192 tokens.",
  };

  it("consolidates once and asks again, and the turn is answered", async () => {
    ep = await startScriptedOpenAI();
    const agent = createAgent(testDeps(ep));
    const ctx = testContext();
    for (const q of ["first", "second", "third"]) {
      ep.script({ match: isTurn, reply: { text: `answer to ${q}` } });
      await agent.chat(input(q), ctx);
    }
    ep.script(
      { match: isTurn, reply: TOO_LONG },
      { match: isCompaction, reply: { text: SUMMARY } },
      { match: isTurn, reply: { text: "answer to fourth" } },
    );
    const res = await agent.chat(input("fourth"), ctx);
    expect(res.status).toBe("answered");
    expect(res.text).toBe("answer to fourth");
    expect(ep.requests.slice(-3).map((r) => r.purpose)).toEqual(["turn", "compaction", "turn"]);
    expect(ctx.reporter.notices.at(-1)).toBe(COMPACTION_NOTICE.hard);
    // The retried request starts from the consolidated window.
    expect(ep.requests.at(-1)!.system).toContain("GOAL: settle the batch");
  });

  it("refused again after consolidating: tells the user how to start over, once", async () => {
    ep = await startScriptedOpenAI();
    const agent = createAgent(testDeps(ep));
    const ctx = testContext();
    ep.script({ match: isTurn, reply: { text: "hello" } });
    await agent.chat(input("hi"), ctx);
    ep.script(
      { match: isTurn, reply: TOO_LONG },
      { match: isCompaction, reply: { text: SUMMARY } },
      { match: isTurn, reply: TOO_LONG },
    );
    const res = await agent.chat(input("and now?"), ctx);
    expect(res.status).toBe("failed");
    expect(ctx.reporter.says.at(-1)).toBe(
      "This conversation has grown past what the language model can take, even after I consolidated it. Say `/neo reset` to start it over.",
    );
    expect(ep.requests.filter(isTurn)).toHaveLength(3);
  });
});
