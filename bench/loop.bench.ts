/**
 * Loop bench: the agent loop's own cost per step with a 200-message transcript and 50 tool
 * schemas, and the token estimator's error against the real o200k tokenizer.
 *
 * Two measurements, kept apart so neither hides in the other:
 *  A. loop only — an in-process LlmClient answers at once, so a step is exactly the loop's work:
 *     memory fault/refault, system block rebuild, budget estimate, request assembly, batch-key
 *     stall check, Status, tool dispatch through the ladder, appends and events. No SDK, no HTTP.
 *  B. loop + real openai SDK + HTTP/JSON to a localhost server that answers instantly (no
 *     validation work on the server), i.e. everything but the model's latency.
 * Run alone: `npx tsx bench/loop.bench.ts`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { loadConfig } from "../src/config.js";
import { createAgent } from "../src/core/agent/agent.js";
import type { AgentDeps } from "../src/core/agent/deps.js";
import { NO_MEMORY } from "../src/core/agent/no-memory.js";
import type { AgentState, TurnContext } from "../src/core/agent/types.js";
import { messagesTokens } from "../src/core/budget/budget.js";
import { estimateTokens } from "../src/core/budget/estimate.js";
import { createLlmClient } from "../src/core/llm/client.js";
import type { Completion, LlmClient, Message, ToolSchema } from "../src/core/llm/types.js";
import { createUsageLedger } from "../src/core/llm/usage-ledger.js";
import type { ToolSurface } from "../src/core/tools/types.js";
import { tokenCorpus } from "../test/support/token-corpus.js";
import { type BenchSection, percentiles } from "./types.js";

const TRANSCRIPT = 200;
const SCHEMAS = 50;
const STEPS_PER_TURN = 20;
const TURNS = 15;

function schemas(): ToolSchema[] {
  return Array.from({ length: SCHEMAS }, (_, i) => ({
    type: "function" as const,
    function: {
      name: `srv${i % 5}__tool_${i}`,
      description: `Tool ${i}: looks things up in system ${i % 5} and returns a JSON document with the results.`,
      parameters: {
        type: "object",
        properties: { query: { type: "string", description: "what to look for" }, limit: { type: "number" } },
        required: ["query"],
      },
    },
  }));
}

/** 200 realistic messages: user asks, assistant narrates and calls tools, tools answer with JSON. */
function transcript(): Message[] {
  const corpus = tokenCorpus();
  const json = corpus.filter((s) => s.kind === "json").map((s) => s.text);
  const prose = corpus.filter((s) => s.kind === "prose").map((s) => s.text);
  const out: Message[] = [];
  for (let i = 0; out.length < TRANSCRIPT; i++) {
    out.push({ role: "user", content: prose[i % prose.length]!.slice(i * 300, i * 300 + 400) });
    const id = `call_${i}`;
    out.push({
      role: "assistant",
      content: `Looking that up (${i}).`,
      tool_calls: [
        {
          id,
          type: "function",
          function: { name: `srv0__tool_${i % SCHEMAS}`, arguments: `{"query":"q${i}"}` },
        },
      ],
    });
    out.push({ role: "tool", tool_call_id: id, content: json[i % json.length]!.slice(0, 1500) });
    out.push({ role: "assistant", content: `Result ${i}: ${prose[0]!.slice(i * 200, i * 200 + 300)}` });
  }
  return out.slice(0, TRANSCRIPT);
}

const tools = (list: ToolSchema[]): ToolSurface => ({
  schemas: () => list,
  dispatch: async (_name, args) => ({
    content: `{"ok":true,"query":${JSON.stringify(args.query)}}`,
    isError: false,
  }),
});

const reply = (step: number): Completion =>
  step < STEPS_PER_TURN
    ? {
        content: `step ${step}`,
        toolCalls: [
          {
            id: `b${step}`,
            type: "function",
            function: { name: "srv1__tool_1", arguments: `{"query":"s${step}"}` },
          },
        ],
        finishReason: "tool_calls",
        usage: { promptTokens: 0, completionTokens: 0 },
        model: "bench",
      }
    : {
        content: "done",
        toolCalls: [],
        finishReason: "stop",
        usage: { promptTokens: 0, completionTokens: 0 },
        model: "bench",
      };

function ctx(): TurnContext {
  const quiet = async () => {};
  return {
    conversation: "console:bench:tty:1",
    shared: false,
    place: { kind: "dm", workspace: "local" },
    reporter: { say: quiet, status: quiet, notice: quiet },
    approvals: { present: async () => undefined, update: quiet },
    signal: new AbortController().signal,
    onEvent: quiet,
  };
}

const limits = {
  contextWindow: 10_000_000, // no compaction: the bench measures steady-state steps
  softPct: 80,
  hardPct: 92,
  stepBudget: 1000,
  noProgressStall: 3,
  refaultEvery: 6,
  maxRetriesPerTool: 3,
  maxAdaptAttempts: 2,
  maxOutputTokens: 1024,
  summaryPct: 20,
};

/** Per-step wall time: the gap between consecutive model calls of a turn (the model answers at once). */
async function measure(makeLlm: (onCall: () => void) => LlmClient, state: AgentState): Promise<number[]> {
  const samples: number[] = [];
  const list = schemas();
  for (let t = 0; t < TURNS + 2; t++) {
    let last = 0;
    const turnSamples: number[] = [];
    const llm = makeLlm(() => {
      const now = performance.now();
      if (last) turnSamples.push(now - last);
      last = now;
    });
    const deps: AgentDeps = { llm, tools: tools(list), memory: NO_MEMORY, limits };
    const agent = createAgent(deps, { working: [...state.working], summary: state.summary });
    await agent.chat(
      { text: "run the steps", speaker: { userKey: "console:bench:me", displayName: "me" } },
      ctx(),
    );
    if (t >= 2) samples.push(...turnSamples); // two warm-up turns
  }
  return samples;
}

function inProcessLlm(onCall: () => void): LlmClient {
  let step = 0;
  return {
    complete: async () => {
      onCall();
      return reply(step++);
    },
  };
}

async function instantServer(): Promise<{ url: string; close: () => Promise<void> }> {
  let step = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const r = reply(step++ % (STEPS_PER_TURN + 1));
      // The client always streams: the answer as OpenAI streams it, in one delta (no pacing).
      const base = { id: "x", object: "chat.completion.chunk", created: 0, model: "bench" };
      const delta = {
        role: "assistant",
        content: r.content,
        ...(r.toolCalls.length ? { tool_calls: r.toolCalls.map((c, index) => ({ index, ...c })) } : {}),
      };
      const chunks = [
        { ...base, choices: [{ index: 0, delta, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: r.finishReason }] },
        { ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
      ];
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const ms = (v: number) => `${v.toFixed(3)} ms`;

export async function run(): Promise<BenchSection> {
  const state: AgentState = { working: transcript(), summary: null };
  const loopOnly = percentiles(await measure(inProcessLlm, state));

  const server = await instantServer();
  const cfg = loadConfig({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "bench", NEO_LLM_MAX_RETRIES: "0" });
  const sdkLlm = createLlmClient(cfg, createUsageLedger());
  const withSdk = percentiles(
    await measure(
      (onCall) => ({
        complete: (req) => {
          onCall();
          return sdkLlm.complete(req);
        },
      }),
      state,
    ),
  );
  await server.close();

  const rows = tokenCorpus().map((s) => {
    const real = encode(s.text).length;
    const est = estimateTokens(s.text);
    return `| ${s.kind} | ${s.name} | ${real} | ${est} | ${(((est - real) / real) * 100).toFixed(1)} % |`;
  });
  // The same quantity the budget estimates, counted with the real tokenizer.
  const realTranscript = state.working.reduce((n, m) => {
    let t = 4 + encode(m.content ?? "").length;
    if (m.role === "assistant") {
      for (const c of m.tool_calls ?? [])
        t += encode(c.function.name).length + encode(c.function.arguments).length + 3;
    }
    return n + t;
  }, 0);
  const estTranscript = messagesTokens(state.working);
  const worst = Math.max(
    ...tokenCorpus().map((s) =>
      Math.abs((estimateTokens(s.text) - encode(s.text).length) / encode(s.text).length),
    ),
  );

  const markdown = `Setup: a ${TRANSCRIPT}-message transcript (prose, tool calls, JSON tool results; ~${estTranscript} tokens) and ${SCHEMAS} tool schemas; each turn runs ${STEPS_PER_TURN} tool steps; ${TURNS} measured turns after 2 warm-up turns (${TURNS * STEPS_PER_TURN} step samples). A step is the time between two consecutive model calls while the model answers instantly.

| per step | median | p99 | goal |
| --- | --- | --- | --- |
| A. loop only (in-process LlmClient; no SDK, no HTTP) | ${ms(loopOnly.median)} | ${ms(loopOnly.p99)} | median < 1 ms: ${loopOnly.median < 1 ? "met" : "NOT met"} |
| B. loop + openai SDK + HTTP/JSON to an instant localhost server | ${ms(withSdk.median)} | ${ms(withSdk.p99)} | (everything but model latency) |

Token estimate vs the real tokenizer (gpt-tokenizer, o200k_base); goal ±10 %, worst here ${(worst * 100).toFixed(1)} %:

| kind | sample | o200k tokens | estimate | error |
| --- | --- | --- | --- | --- |
${rows.join("\n")}

Whole bench transcript (content + tool calls + 4 per message): o200k ${realTranscript}, estimate ${estTranscript}, error ${(((estTranscript - realTranscript) / realTranscript) * 100).toFixed(1)} %.`;
  return { title: "Agent loop: cost per step and token-estimate error", markdown };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then((s) => process.stdout.write(`## ${s.title}\n\n${s.markdown}\n`));
}
