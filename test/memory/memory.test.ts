/**
 * The memory side as the loop and the tool surface see it: the MemoryPort (fault for the speaker
 * only, writeBack in the background) and the memory_recall delegate, with the real LlmClient (real
 * openai SDK) talking to the scripted endpoint for the cheap model. Runs on both stores.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/core/llm/types.js";
import { createMemory, type Memory } from "../../src/memory/memory.js";
import type { Store } from "../../src/store/types.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { BACKENDS, type Backend } from "./support/stores.js";

const ANA = "slack:T1:U_ANA";
const BEN = "slack:T1:U_BEN";
const CONV = "slack:T1:C1:1700000000.000100";
const speaker = (userKey: string) => ({ speaker: { userKey, displayName: userKey.split(":")[2]! } });

const exchange = (user: string, answer: string): Message[] => [
  { role: "user", content: user },
  { role: "assistant", content: answer },
];

const reply = (obj: unknown) => ({ reply: { text: typeof obj === "string" ? obj : JSON.stringify(obj) } });

for (const { name, factory, skip } of BACKENDS) {
  describe.skipIf(skip)(`memory port on ${name}`, () => {
    let backend: Backend;
    let store: Store;
    let ep: ScriptedOpenAI;
    let memory: Memory;
    const setup = async (test: string, opts: { depth?: number } = {}) => {
      backend = factory(`memory-${test}`);
      store = await backend.open();
      ep = await startScriptedOpenAI();
      const { llm } = createLlmForTest(ep, { NEO_CHEAP_MODEL: "cheap-model" });
      memory = createMemory({ store, llm, writebackDepth: opts.depth });
    };
    afterEach(async () => {
      await memory.drained();
      await ep.close();
      await backend.cleanup();
    });

    it("writes back what the cheap model extracts and faults it into the speaker's page", async () => {
      await setup("writeback");
      ep.script({
        label: "writeback",
        expect: (req) => {
          expect(req.purpose).toBe("writeback");
          expect(req.model).toBe("cheap-model");
          expect(req.body.response_format).toEqual({ type: "json_object" });
          expect(req.messages[0]!.content).toContain("USER: I'm Ana and our prod cluster is eks-prod-7");
        },
        reply: {
          text: `Here you go:\n\`\`\`json\n${JSON.stringify({
            facts: ["Ana's team runs production on the EKS cluster eks-prod-7."],
            user_facts: ["The user's name is Ana.", "Ana prefers short answers."],
            patterns: [
              {
                name: "Check cluster health",
                trigger: "user asks whether the cluster is healthy",
                steps: ["kubectl get nodes"],
              },
            ],
            outcome: null,
          })}\n\`\`\``,
        },
      });
      memory.port.writeBack({
        user: ANA,
        conversation: CONV,
        transcript: exchange("I'm Ana and our prod cluster is eks-prod-7", "Nice to meet you, Ana."),
      });
      await memory.drained();
      expect(memory.stats()).toMatchObject({
        processed: 1,
        failed: 0,
        drops: 0,
        depth: 0,
        written: { facts: 1, userFacts: 2, patterns: 1, outcomes: 0, constraints: 0, goals: 0 },
      });

      const page = await memory.port.fault({
        user: ANA,
        conversation: "slack:T1:C1:other",
        query: "is the prod cluster healthy?",
        activeGoal: "check whether the cluster is healthy",
        live: [],
      });
      expect(page.unavailable).toBeUndefined();
      expect(page.pinned).toContain("The user's name is Ana.");
      expect(page.pinned).not.toContain("check whether the cluster is healthy"); // the loop pins it
      expect(page.retrieved).toContain("eks-prod-7");
      expect(page.patterns).toContain("Check cluster health");
      expect(page.patterns).toContain("1. kubectl get nodes");
      expect(page.recalled).toContain("I'm Ana and our prod cluster is eks-prod-7");

      await memory.pager.setGoal(ANA, "Migrate the cluster to eks-prod-8");
      const withGoal = await memory.port.fault({
        user: ANA,
        conversation: CONV,
        query: "hi",
        activeGoal: "hi",
        live: [],
      });
      expect(withGoal.pinned).toContain("Open goal (set earlier): Migrate the cluster to eks-prod-8");

      const bens = await memory.port.fault({
        user: BEN,
        conversation: "slack:T1:C1:other",
        query: "is the prod cluster healthy?",
        activeGoal: "",
        live: [],
      });
      expect(bens.retrieved + bens.patterns + bens.recalled).toBe("");
      expect(bens.pinned).not.toContain("Ana");
    });

    it("writes nothing and does not crash when the model answers garbage or fails", async () => {
      await setup("garbage");
      ep.script(
        reply("I could not find anything, sorry!"),
        reply("{ this is not json ]"),
        { reply: { kind: "error", status: 500 } },
        { reply: { kind: "error", status: 500 } },
      );
      for (let i = 0; i < 3; i++)
        memory.port.writeBack({
          user: ANA,
          conversation: CONV,
          transcript: exchange(`message ${i}`, `answer ${i}`),
        });
      await memory.drained();
      const stats = memory.stats();
      expect(stats.processed + stats.failed).toBe(3);
      expect(stats.failed).toBe(1);
      expect(stats.written).toEqual({
        facts: 0,
        userFacts: 0,
        patterns: 0,
        outcomes: 0,
        constraints: 0,
        goals: 0,
      });
      expect(await memory.pager.records(ANA)).toEqual([]);
      expect((await memory.pager.exportUser(ANA)).turns).toHaveLength(3);
    });

    it("holds 8 jobs and drops the 9th concurrent one, counting it", async () => {
      await setup("drops");
      const empty = { facts: [], user_facts: [], patterns: [], outcome: null };
      for (let i = 0; i < 8; i++) ep.script(reply(empty));
      const accepted: boolean[] = [];
      for (let i = 0; i < 9; i++) {
        memory.port.writeBack({ user: ANA, conversation: CONV, transcript: exchange(`job ${i}`, "ok") });
        accepted.push(memory.stats().drops === 0);
      }
      expect(memory.stats()).toMatchObject({ depth: 8, capacity: 8, drops: 1 });
      expect(accepted).toEqual([true, true, true, true, true, true, true, true, false]);
      await memory.drained();
      expect(memory.stats()).toMatchObject({ depth: 0, drops: 1, processed: 8 });
      expect(ep.requests.filter((r) => r.purpose === "writeback")).toHaveLength(8);
      expect(ep.requests.map((r) => r.messages[0]!.content).join()).not.toContain("job 8");
    });

    it("memory_recall digests only the calling speaker's records and profile", async () => {
      await setup("recall");
      await memory.pager.rememberUserFact(ANA, "Ana's favourite editor is Helix");
      await memory.pager.rememberFact(ANA, "Ana's deploy key is stored in vault path secret/ana/deploy");
      await memory.pager.rememberUserFact(BEN, "Ben's favourite editor is Emacs");
      const forAna = await memory.memoryRecall("deploy key vault", speaker(ANA));
      expect(forAna.isError).toBe(false);
      expect(forAna.content).toContain("Helix");
      expect(forAna.content).toContain("secret/ana/deploy");
      expect(forAna.content).not.toContain("Emacs");
      const forBen = await memory.memoryRecall("deploy key vault", speaker(BEN));
      expect(forBen.content).toContain("Emacs");
      expect(forBen.content).not.toMatch(/Helix|secret\/ana/);
      const everything = await memory.memoryRecall("", speaker(ANA));
      expect(everything.content).toContain("secret/ana/deploy");
      const described = await memory.describe(ANA);
      expect(described).toContain("Helix");
      expect(described).toContain("secret/ana/deploy");
      expect(described).not.toContain("Emacs");
      expect(await memory.describe("slack:T1:U_NEW")).toBe("");
      expect(await memory.forget(ANA)).toBe(2);
      expect(await memory.describe(ANA)).toBe("");
      expect(await memory.describe(BEN)).toContain("Emacs");
      const nobody = await memory.memoryRecall("anything", speaker("slack:T1:U_NEW"));
      expect(nobody).toEqual({ content: "Nothing is remembered about this user yet.", isError: false });
    });
  });
}
