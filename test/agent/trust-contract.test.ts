/**
 * Acceptance: the trust contract stays bounded. Twenty turns, each reading a file of 200 new
 * identifiers (transaction hashes, short git SHAs, e-mail addresses, file names, URLs) with the
 * published filesystem MCP server, each followed by a compaction whose summarizer keeps none of them
 * (the worst case): the summary never exceeds its cap, every identifier of the last turn survives
 * verbatim (in the kept tail, or in the summary once compacted), and an identifier of the first turn, long moved out, is found again through
 * `conversation_lookup` over the conversation's log in a real store. Real loop, real openai SDK,
 * validating endpoint.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import type { AgentEvent } from "../../src/core/agent/types.js";
import { estimateTokens } from "../../src/core/budget/estimate.js";
import { summaryCapTokens } from "../../src/core/compaction/compact.js";
import { highEntropyTokens } from "../../src/core/compaction/entropy.js";
import { compactionNumber } from "../../src/core/compaction/marker.js";
import { splitSummary } from "../../src/core/compaction/preserved.js";
import { createJournal } from "../../src/core/conversations/journal.js";
import { createConversationLookup } from "../../src/core/conversations/lookup.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { input, testContext, testDeps } from "../support/agent-kit.js";
import { type ScriptedRequest, startScriptedOpenAI } from "../support/scripted-openai.js";
import { filesystemServer, tempDir } from "../tools/helpers.js";

/** Small enough that each manual compaction summarizes a turn; the kept tail holds about two. */
const WINDOW = 48_000;
const SUMMARY_PCT = 20;
const TURNS = 20;
const PER_TURN = 200;
const CONV = "slack:T1:D1:D1";
const dir = tempDir("trust");
const files = join(dir, "files");
let store: Store;
let tools: McpToolSurface;

/** 200 identifiers for turn `t`, five shapes in turn, all distinct across turns. */
function identifiers(t: number): string[] {
  return Array.from({ length: PER_TURN }, (_, i) => {
    const n = t * 1000 + i;
    switch (i % 5) {
      case 0:
        return `0x${n.toString(16).padStart(8, "0")}${"9f3e".repeat(14)}`;
      case 1:
        return (0xa000000 + n).toString(16); // a 7-hex short SHA
      case 2:
        return `ops.t${t}.n${i}@mail-${t}.example.org`;
      case 3:
        return `settlement-${t}-${i}.csv`;
      default:
        return `https://explorer.example.com/tx/${t}/${i}`;
    }
  });
}

beforeAll(async () => {
  mkdirSync(files);
  for (let t = 1; t <= TURNS; t++) {
    writeFileSync(
      join(files, `batch-${t}.txt`),
      identifiers(t)
        .map((id) => `- ${id}`)
        .join("\n"),
    );
  }
  store = await createStore({ dataDir: join(dir, "data"), prefix: "neo:" });
  tools = await createToolSurface({
    manifest: parseManifest({ servers: { fs: filesystemServer(files) } }),
    resultMaxChars: 40_000,
    callTimeoutMs: 20_000,
    conversationLookup: createConversationLookup(store),
  });
  expect(tools.warnings()).toEqual([]);
});
afterAll(async () => {
  await tools?.close();
  await store?.close();
});

const lastResult = (r: ScriptedRequest) => String(r.messages.at(-1)?.content ?? "");

describe("the bounded trust contract", () => {
  it("20 compactions of 200 new identifiers each: under the cap, the last turn verbatim, the first found again", async () => {
    const ep = await startScriptedOpenAI();
    ep.fallback((r) => {
      // The summarizer keeps no identifier at all: everything rests on the runtime's list.
      if (r.purpose === "compaction")
        return {
          text: "GOAL: reconcile the settlement batches\nDECISIONS: one batch per turn\nARTIFACTS: see the runtime list\nOPEN: none\nLAST_RESULTS: batches read\nNEXT: the next batch",
        };
      const ask = String(r.messages.findLast((m) => m.role === "user")?.content ?? "");
      const t = /batch (\d+)/.exec(ask)?.[1];
      if (r.messages.at(-1)?.role === "user" && t)
        return { toolCalls: [{ name: "fs__read_file", arguments: { path: join(files, `batch-${t}.txt`) } }] };
      return { text: `Batch read: ${highEntropyTokens(lastResult(r)).length} identifiers.` };
    });
    const journal = createJournal(store, 60_000, 30 * 86_400_000);
    let length = 0;
    const ctx = () =>
      testContext({
        conversation: CONV,
        onEvent: async (e: AgentEvent) => {
          length = await journal.appendLog(CONV, [e], length);
        },
      });
    const agent = createAgent(
      testDeps(ep, { tools, limits: { contextWindow: WINDOW, summaryPct: SUMMARY_PCT } }),
    );
    const cap = summaryCapTokens(WINDOW, SUMMARY_PCT);
    const sizes: number[] = [];
    for (let t = 1; t <= TURNS; t++) {
      const res = await agent.chat(input(`reconcile batch ${t}`), ctx());
      expect(res.text).toBe(`Batch read: ${PER_TURN} identifiers.`);
      await agent.compact("manual", ctx());
      const { summary, working } = agent.state();
      sizes.push(estimateTokens(summary!));
      expect(estimateTokens(summary!)).toBeLessThanOrEqual(cap);
      // What the next request shows the model: the summary and the kept tail.
      const visible = `${summary}\n${JSON.stringify(working)}`;
      for (const id of identifiers(t)) expect(visible).toContain(id);
      // The newest turn compaction took out of the window is in the summary, every identifier verbatim.
      const inWindow = (n: number) => working.some((m) => m.content?.includes(identifiers(n)[0]!));
      const compacted = Array.from({ length: t }, (_, i) => t - i).find((n) => !inWindow(n));
      if (compacted) for (const id of identifiers(compacted)) expect(summary).toContain(id);
    }
    expect(compactionNumber(agent.state().summary)).toBe(TURNS);
    const last = splitSummary(agent.state().summary);
    // Newest first: the newest compacted turn's identifiers lead the list; the oldest have moved out,
    // and the summary says how many.
    const window = JSON.stringify(agent.state().working);
    const kept = Array.from({ length: TURNS }, (_, i) => TURNS - i).find(
      (n) => !window.includes(identifiers(n)[0]!),
    )!;
    expect(last.preserved.slice(0, PER_TURN)).toEqual(identifiers(kept).reverse());
    // Each compacted turn carried its 200 identifiers plus the path it read.
    expect(last.movedOut + last.preserved.length).toBe(kept * (PER_TURN + 1));
    expect(agent.state().summary).toMatch(/Moved out of this summary so far: \d+ older identifiers/);
    const early = identifiers(1)[0]!;
    expect(agent.state().summary).not.toContain(early);
    console.log(
      `summary tokens after 1, 5, 20 compactions: ${sizes[0]}, ${sizes[4]}, ${sizes[19]} (cap ${cap})`,
    );

    // The documented path: the model looks the early identifier up in the conversation's history.
    ep.script(
      {
        expect: (r) => expect(r.system).toContain("conversation_lookup"),
        reply: { toolCalls: [{ name: "conversation_lookup", arguments: { query: early } }] },
      },
      {
        expect: (r) => {
          expect(lastResult(r)).toMatch(/^1 match in this conversation's history/);
          expect(lastResult(r)).toContain(early);
        },
        reply: { text: `Found it: ${early} was in batch 1.` },
      },
    );
    const found = await agent.chat(input("which batch had the first transaction you read?"), ctx());
    expect(ep.violations).toEqual([]);
    expect(found).toMatchObject({ status: "answered", text: `Found it: ${early} was in batch 1.` });
    await ep.close();
  }, 120_000);
});
