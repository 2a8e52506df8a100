/**
 * The pinned block, complete, as the model receives it: identity (name, deployment, place, who
 * asked), the inviolable rules, the user's hard constraints and open goal from the cortex, and the
 * turn's active goal. Constraints and goals are written by write-back from what the user said; a
 * finished goal leaves the block. Real loop, real cortex over the file store, real openai SDK
 * against the validating endpoint (the cheap model's write-back included).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { INVIOLABLE_RULES } from "../../src/core/agent/prompt.js";
import { createMemory, type Memory } from "../../src/memory/memory.js";
import { testContext, testLimits, testTools } from "../support/agent-kit.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { type Backend, fileBackend } from "./support/stores.js";

const ANN = { userKey: "slack:T1:U_ANN", displayName: "Ann" };
const BOB = { userKey: "slack:T1:U_BOB", displayName: "Bob" };
const CONSTRAINT = "Never spend more than 5 USDC without asking first.";
const GOAL = "Migrate the billing service to the eks-prod-8 cluster";
const isTurn = (r: { purpose: string | null }) => r.purpose === "turn";
const isWriteback = (r: { purpose: string | null }) => r.purpose === "writeback";
/** The cheap model's write-back answer for a one-conversation prompt. */
const writeback = (entry: object) => JSON.stringify({ conversations: [{ conversation: 1, ...entry }] });

describe("the pinned block reaches the model, every part of it", () => {
  let backend: Backend;
  let ep: ScriptedOpenAI;
  let memory: Memory;
  afterEach(async () => {
    await memory.drained();
    await ep.close();
    await backend.cleanup();
  });

  it("identity, rules, constraints and goal written back from the user's words; a finished goal leaves", async () => {
    backend = fileBackend("pinned");
    const store = await backend.open();
    ep = await startScriptedOpenAI();
    const { llm } = createLlmForTest(ep, { NEO_CHEAP_MODEL: "cheap-model" });
    memory = createMemory({ store, llm });
    const agent = () =>
      createAgent({
        llm,
        tools: testTools({}),
        memory: memory.port,
        limits: testLimits(),
        identity: { name: "Neo", deployment: "acme-prod" },
      });
    const ctx = (conversation: string, shared: boolean) => testContext({ conversation, shared });

    // Turn 1, a DM: Ann states a standing rule and a goal that spans turns, for every place.
    ep.script(
      {
        match: isTurn,
        expect: (r) => {
          expect(r.system).toContain(
            'Identity: You are Neo (deployment "acme-prod"), on Slack, in a direct conversation. This turn is for Ann.',
          );
          expect(r.system).not.toContain("Hard constraints");
        },
        reply: { text: "Understood: at most 5 USDC without asking. Let's plan the migration." },
      },
      {
        match: isWriteback,
        expect: (r) => expect(String(r.messages[0]!.content)).not.toContain("OPEN GOAL ON RECORD"),
        reply: {
          text: writeback({
            facts: [],
            user_facts: [],
            patterns: [],
            outcome: null,
            constraints: [CONSTRAINT],
            goal: { statement: GOAL, status: "active" },
            // Said in a DM: without this the rule and goal would stay in DMs (Memory scopes).
            remember_everywhere: true,
          }),
        },
      },
    );
    await agent().chat(
      {
        text: "From now on, never spend more than 5 USDC without asking me first. This week I'm migrating billing to eks-prod-8. Remember this everywhere.",
        speaker: ANN,
      },
      ctx("slack:T1:D_ANN:D_ANN", false),
    );
    await memory.drained();

    // Turn 2, a shared thread: every part of the pinned block is in the request.
    ep.script(
      {
        match: isTurn,
        expect: (r) => {
          const pinned = r.system.slice(r.system.indexOf("## Pinned"));
          expect(pinned).toContain(
            'Identity: You are Neo (deployment "acme-prod"), on Slack, in a thread where several people may speak. This turn is for Ann.',
          );
          for (const rule of INVIOLABLE_RULES) expect(pinned).toContain(`- ${rule}`);
          expect(pinned).toContain(
            `Hard constraints (the user set these; never violate them):\n- ${CONSTRAINT}`,
          );
          expect(pinned).toContain(`Open goal (set earlier): ${GOAL}`);
          expect(pinned).toContain("Active goal: Ann: the cutover went fine, billing runs on eks-prod-8 now");
        },
        reply: { text: "Great, the migration is done." },
      },
      {
        match: isWriteback,
        expect: (r) =>
          expect(String(r.messages[0]!.content)).toContain(`=== OPEN GOAL ON RECORD ===\n${GOAL}`),
        reply: { text: writeback({ facts: [], goal: { statement: GOAL, status: "done" } }) },
      },
    );
    await agent().chat(
      { text: "the cutover went fine, billing runs on eks-prod-8 now", speaker: ANN },
      ctx("slack:T1:C1:100.1", true),
    );
    await memory.drained();
    expect(memory.stats().written).toMatchObject({ constraints: 1, goals: 2 });

    // Turn 3: the finished goal is gone, the constraint stays; Bob sees neither of Ann's.
    ep.script(
      {
        match: isTurn,
        expect: (r) => {
          expect(r.system).toContain(`- ${CONSTRAINT}`);
          expect(r.system).not.toContain("Open goal");
        },
        reply: { text: "Sure." },
      },
      { match: isWriteback, reply: { text: "{}" } },
      {
        match: isTurn,
        expect: (r) => {
          expect(r.system).toContain("This turn is for Bob.");
          expect(r.system).not.toContain(CONSTRAINT);
          expect(r.system).toContain("Inviolable rules:");
        },
        reply: { text: "Hi Bob." },
      },
      { match: isWriteback, reply: { text: "{}" } },
    );
    await agent().chat({ text: "send 3 USDC to ops", speaker: ANN }, ctx("slack:T1:C1:100.2", true));
    await agent().chat({ text: "hello", speaker: BOB }, ctx("slack:T1:C1:100.3", true));
  });
});
