/**
 * The bounded trust contract over a long conversation (issue 22): twenty turns, each reading 200
 * new identifiers (tx hashes, short SHAs, e-mails, file names, URLs) and each followed by a
 * compaction whose summarizer keeps none of them (the worst case, as in
 * test/agent/trust-contract.test.ts). Records the summary's size after N = 1, 5 and 20 compactions
 * against its cap, and the tokens each model call of a turn sends (system + transcript + tools, the
 * loop's own estimate). Real loop and compaction; an in-process model and tool surface, so the
 * numbers are the runtime's, not an endpoint's.
 */
import { createAgent } from "../src/core/agent/agent.js";
import type { AgentDeps } from "../src/core/agent/deps.js";
import { NO_MEMORY } from "../src/core/agent/no-memory.js";
import type { TurnContext } from "../src/core/agent/types.js";
import { requestTokens } from "../src/core/budget/budget.js";
import { estimateTokens } from "../src/core/budget/estimate.js";
import { summaryCapTokens } from "../src/core/compaction/compact.js";
import { splitSummary } from "../src/core/compaction/preserved.js";
import type { Completion, LlmClient, ToolSchema } from "../src/core/llm/types.js";
import { setLogLevel } from "../src/core/log.js";
import type { ToolSurface } from "../src/core/tools/types.js";
import { type BenchSection, percentiles } from "./types.js";

const WINDOW = 48_000;
const SUMMARY_PCT = 20;
const TURNS = 20;
const PER_TURN = 200;

function identifiers(t: number): string[] {
  return Array.from({ length: PER_TURN }, (_, i) => {
    const n = t * 1000 + i;
    switch (i % 5) {
      case 0:
        return `0x${n.toString(16).padStart(8, "0")}${"9f3e".repeat(14)}`;
      case 1:
        return (0xa000000 + n).toString(16);
      case 2:
        return `ops.t${t}.n${i}@mail-${t}.example.org`;
      case 3:
        return `settlement-${t}-${i}.csv`;
      default:
        return `https://explorer.example.com/tx/${t}/${i}`;
    }
  });
}

const READ: ToolSchema = {
  type: "function",
  function: {
    name: "fs__read_file",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
};

const tools: ToolSurface = {
  schemas: () => [READ],
  dispatch: async (_name, args) => {
    const t = Number(/batch-(\d+)/.exec(String(args.path))?.[1]);
    return {
      content: identifiers(t)
        .map((id) => `- ${id}`)
        .join("\n"),
      isError: false,
    };
  },
};

const done = (content: string | null, toolCalls: Completion["toolCalls"] = []): Completion => ({
  content,
  toolCalls,
  finishReason: toolCalls.length ? "tool_calls" : "stop",
  usage: { promptTokens: 0, completionTokens: 0 },
  model: "bench",
});

/** Answers like the acceptance test's endpoint; records each turn call's request size. */
function model(sent: number[]): LlmClient {
  return {
    complete: async (req) => {
      if (req.tags.purpose === "compaction") {
        return done(
          "GOAL: reconcile the settlement batches\nDECISIONS: one batch per turn\nARTIFACTS: see the runtime list\nOPEN: none\nLAST_RESULTS: batches read\nNEXT: the next batch",
        );
      }
      sent.push(requestTokens({ system: req.system, messages: req.messages, tools: req.tools ?? [] }));
      const last = req.messages.at(-1);
      const t = /batch (\d+)/.exec(String(last?.content ?? ""))?.[1];
      if (last?.role === "user" && t) {
        return done(null, [
          {
            id: `call_${t}`,
            type: "function",
            function: {
              name: READ.function.name,
              arguments: JSON.stringify({ path: `/data/batch-${t}.txt` }),
            },
          },
        ]);
      }
      return done(`Batch read: ${PER_TURN} identifiers.`);
    },
  };
}

function ctx(): TurnContext {
  const quiet = async () => {};
  return {
    conversation: "console:bench:tty:trust",
    shared: false,
    place: { kind: "dm", workspace: "local" },
    reporter: { say: quiet, status: quiet, notice: quiet },
    approvals: { present: async () => undefined, update: quiet },
    signal: new AbortController().signal,
    onEvent: quiet,
  };
}

export async function run(): Promise<BenchSection> {
  setLogLevel("warn"); // a "turn ended" line per turn is not the bench's output
  const sent: number[] = [];
  const deps: AgentDeps = {
    llm: model(sent),
    tools,
    memory: NO_MEMORY,
    limits: {
      contextWindow: WINDOW,
      softPct: 80,
      hardPct: 92,
      stepBudget: 40,
      noProgressStall: 3,
      refaultEvery: 6,
      maxRetriesPerTool: 3,
      maxAdaptAttempts: 2,
      maxOutputTokens: 1024,
      summaryPct: SUMMARY_PCT,
    },
  };
  const agent = createAgent(deps);
  const cap = summaryCapTokens(WINDOW, SUMMARY_PCT);
  const rows: string[] = [];
  const perTurn: Array<{ turn: number; steps: number[] }> = [];
  for (let t = 1; t <= TURNS; t++) {
    const before = sent.length;
    await agent.chat(
      { text: `reconcile batch ${t}`, speaker: { userKey: "console:bench:me", displayName: "me" } },
      ctx(),
    );
    perTurn.push({ turn: t, steps: sent.slice(before) });
    await agent.compact("manual", ctx());
    if (t === 1 || t === 5 || t === 20) {
      const summary = agent.state().summary ?? "";
      const parts = splitSummary(summary);
      const size = estimateTokens(summary);
      rows.push(
        `| ${t} | ${size} | ${cap} | ${((size * 100) / WINDOW).toFixed(1)} % | ${parts.preserved.length} | ${parts.movedOut} |`,
      );
    }
  }
  const all = percentiles(sent);
  const stepRows = perTurn
    .filter((p) => p.turn === 1 || p.turn === 5 || p.turn === 20)
    .map((p) => `| ${p.turn} | ${p.steps.join(", ")} |`);

  const markdown = `Setup: a ${WINDOW.toLocaleString("en-US")}-token window, summary cap ${SUMMARY_PCT} % (${cap} tokens); ${TURNS} turns, each a tool step reading ${PER_TURN} new identifiers and an answer, each followed by a compaction whose summarizer keeps no identifier (the runtime's preserved list carries them, newest first, within the cap).

| after N compactions | summary tokens | cap | of the window | identifiers kept verbatim | moved out (found with \`conversation_lookup\`) |
| --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

Tokens sent per model call of a turn (system + transcript + tool schemas, the loop's estimate):

| turn | per step (tool step, answer) |
| --- | --- |
${stepRows.join("\n")}

Over all ${sent.length} steps: median ${all.median}, p99 ${all.p99}, max ${Math.max(...sent)} tokens (${((Math.max(...sent) * 100) / WINDOW).toFixed(1)} % of the window).`;
  return { title: "Trust contract: summary size after N compactions, tokens per step", markdown };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then((s) => process.stdout.write(`## ${s.title}\n\n${s.markdown}\n`));
}
