/**
 * End to end, through the REAL loop (`createAgent`), the real tool surface (memory_recall wired to
 * the memory delegate), the real LlmClient and the scripted OpenAI endpoint, on both stores:
 *
 * 1. Ana tells Neo a fact in one thread; write-back (cheap model) stores it in Ana's cortex.
 * 2. In a NEW thread of the same channel, Ana's question gets the fact in the system block.
 * 3. Ben asks the same in the same channel: the fact is not in his system block, not in what
 *    memory_recall returns to him, not in recalled turns.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import type { TurnInput } from "../../src/core/agent/types.js";
import { conversationKey, userKey } from "../../src/core/keys.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { MEMORY_RECALL_TOOL } from "../../src/core/tools/types.js";
import { createMemory, type Memory } from "../../src/memory/memory.js";
import { testContext, testLimits } from "../support/agent-kit.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { BACKENDS, type Backend } from "./support/stores.js";

const SECRET = "secret/ana/deploy-7731";
const ana: TurnInput["speaker"] = {
  userKey: userKey({ platform: "slack", workspace: "T1", user: "U_ANA" }),
  displayName: "Ana",
};
const ben: TurnInput["speaker"] = {
  userKey: userKey({ platform: "slack", workspace: "T1", user: "U_BEN" }),
  displayName: "Ben",
};
const thread = (ts: string) =>
  conversationKey({ platform: "slack", workspace: "T1", channel: "C_OPS", thread: ts });

const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";
const nothingDurable = { facts: [], user_facts: [], patterns: [], outcome: null };
const NOTHING = JSON.stringify({ conversations: [] });
/** The cheap model's write-back answer for a one-conversation prompt. */
const writeback = (entry: object) => JSON.stringify({ conversations: [{ conversation: 1, ...entry }] });
const everything = (r: ScriptedRequest) => JSON.stringify({ system: r.system, messages: r.messages });

for (const { name, factory, skip } of BACKENDS) {
  describe.skipIf(skip)(`memory end to end through the loop on ${name}`, () => {
    let backend: Backend;
    let ep: ScriptedOpenAI;
    let memory: Memory;
    let tools: McpToolSurface;
    /** Real store, real memory, real tool surface (no MCP servers, memory_recall wired), real client. */
    const setup = async (test: string) => {
      backend = factory(test);
      const store = await backend.open();
      ep = await startScriptedOpenAI();
      const { llm } = createLlmForTest(ep, { NEO_CHEAP_MODEL: "cheap-model" });
      memory = createMemory({ store, llm });
      tools = await createToolSurface({
        manifest: parseManifest({ servers: {} }),
        resultMaxChars: 20_000,
        callTimeoutMs: 5_000,
        memoryRecall: memory.memoryRecall,
      });
      return { llm, tools, memory: memory.port, limits: testLimits() };
    };
    afterEach(async () => {
      await memory.drained();
      await tools.close();
      await ep.close();
      await backend.cleanup();
    });

    it("remembers Ana's fact for Ana in a new conversation and never shows it to Ben", async () => {
      const deps = await setup("e2e-isolation");
      expect(tools.schemas().map((s) => s.function.name)).toContain(MEMORY_RECALL_TOOL);

      // 1. Ana tells Neo where her deploy token lives.
      ep.script(
        { label: "ana tells", match: isTurn, reply: { text: "Got it, Ana." } },
        {
          label: "write-back of ana's fact",
          match: isWriteback,
          expect: (r) => {
            expect(r.model).toBe("cheap-model");
            expect(r.messages[0]!.content).toContain(SECRET);
          },
          reply: {
            text: writeback({
              ...nothingDurable,
              user_facts: [`Ana's deploy token lives in vault at ${SECRET}.`],
            }),
          },
        },
      );
      const first = await createAgent(deps).chat(
        { text: `Please remember: my deploy token lives in vault at ${SECRET}`, speaker: ana },
        testContext({ conversation: thread("1700000001.000100"), shared: true }),
      );
      expect(first.status).toBe("answered");
      await memory.drained();
      expect(memory.stats().written.userFacts).toBe(1);

      // 2. A new thread in the same channel: Ana's question gets the fact in the system block.
      ep.script(
        {
          label: "ana asks",
          match: isTurn,
          expect: (r) => {
            expect(r.system).toContain(SECRET);
            expect(r.system).toContain("Please remember: my deploy token lives in vault"); // recalled turn
          },
          reply: { text: `It is in vault at ${SECRET}.` },
        },
        { label: "write-back ana asks", match: isWriteback, reply: { text: NOTHING } },
      );
      const second = await createAgent(deps).chat(
        { text: "where does my deploy token live?", speaker: ana },
        testContext({ conversation: thread("1700000002.000200"), shared: true }),
      );
      expect(second.text).toContain(SECRET);
      await memory.drained();

      // 3. Ben asks the same in the same channel, and even asks memory_recall.
      ep.script(
        {
          label: "ben asks",
          match: isTurn,
          expect: (r) => {
            expect(everything(r)).not.toContain("deploy-7731");
            expect(everything(r)).not.toContain("Ana");
          },
          reply: { toolCalls: [{ name: MEMORY_RECALL_TOOL, arguments: { query: "deploy token vault" } }] },
        },
        {
          label: "ben sees the recall result",
          match: isTurn,
          expect: (r) => {
            const result = r.messages.at(-1)!;
            expect(result.role).toBe("tool");
            expect(String(result.content)).toContain("Nothing is remembered about this user yet.");
            expect(everything(r)).not.toContain("deploy-7731");
          },
          reply: { text: "I don't know where your deploy token lives." },
        },
        { label: "write-back ben", match: isWriteback, reply: { text: NOTHING } },
      );
      const third = await createAgent(deps).chat(
        { text: "where does my deploy token live?", speaker: ben },
        testContext({ conversation: thread("1700000003.000300"), shared: true }),
      );
      expect(third.status).toBe("answered");
      await memory.drained();

      // Ben's cortex holds only his own turn; Ana's holds her fact and her turns.
      const bens = await memory.pager.exportUser(ben.userKey);
      expect(JSON.stringify(bens)).not.toContain("deploy-7731");
      expect(bens.turns.map((t) => t.user)).toEqual(["Ben: where does my deploy token live?"]);
      const anas = await memory.pager.exportUser(ana.userKey);
      expect(anas.records.map((r) => r.kind)).toEqual(["user_fact"]);
      expect(anas.turns).toHaveLength(2);
      // One write-back per completed turn, each tagged with its own conversation.
      expect(new Set(ep.requests.filter(isWriteback).map((r) => r.conversation)).size).toBe(3);
    });

    it("in one thread with two people, each one's facts land in their own cortex", async () => {
      const deps = await setup("e2e-shared-thread");
      const agent = createAgent(deps);
      const ctx = () => testContext({ conversation: thread("1700000009.000900"), shared: true });

      ep.script(
        { label: "ana speaks", match: isTurn, reply: { text: "Noted, Ana." } },
        {
          label: "write-back after ana",
          match: isWriteback,
          reply: { text: writeback({ ...nothingDurable, user_facts: ["Prefers tabs over spaces."] }) },
        },
      );
      await agent.chat({ text: "I prefer tabs over spaces", speaker: ana }, ctx());
      await memory.drained();
      ep.script(
        {
          label: "ben speaks",
          match: isTurn,
          expect: (r) => {
            // The thread transcript is shared (Ben sees Ana's message), but memory is not.
            expect(r.messages[0]).toEqual({ role: "user", content: "Ana: I prefer tabs over spaces" });
            expect(r.system).not.toContain("Prefers tabs over spaces.");
          },
          reply: { text: "Noted, Ben." },
        },
        {
          label: "write-back after ben",
          match: isWriteback,
          expect: (r) =>
            expect(r.messages[0]!.content).toContain("THE TURN TO CONSOLIDATE ===\nUSER: Ben: I use vim"),
          reply: { text: writeback({ ...nothingDurable, user_facts: ["Uses vim."] }) },
        },
      );
      await agent.chat({ text: "I use vim", speaker: ben }, ctx());
      await memory.drained();

      const facts = async (user: string) =>
        (await memory.pager.pinned(user, { kind: "dm", workspace: "T1" })).profile.map((f) => f.statement);
      expect(await facts(ana.userKey)).toEqual(["Prefers tabs over spaces."]);
      expect(await facts(ben.userKey)).toEqual(["Uses vim."]);
      expect((await memory.pager.exportUser(ben.userKey)).turns.map((t) => t.user)).toEqual([
        "Ben: I use vim",
      ]);
    });
  });
}
