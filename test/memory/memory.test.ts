/**
 * The memory side as the loop and the tool surface see it: the MemoryPort (fault for the speaker
 * only, writeBack in the background) and the memory_recall delegate, with the real LlmClient (real
 * openai SDK) talking to the scripted endpoint for the cheap model. Runs on both stores.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createTurnGauge, type Foreground } from "../../src/core/foreground.js";
import type { Message } from "../../src/core/llm/types.js";
import { createMemory, type Memory } from "../../src/memory/memory.js";
import { metrics } from "../../src/ops/metrics.js";
import type { Store } from "../../src/store/types.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { foundInStore, foundOnDisk } from "../support/on-disk.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { type Backend, WITH_CLUSTER } from "./support/stores.js";

const ANA = "slack:T1:U_ANA";
const BEN = "slack:T1:U_BEN";
const CAT = "slack:T1:U_CAT";
const CONV = "slack:T1:C1:1700000000.000100";
/** CONV's channel: a public channel of T1. */
const CHANNEL = { kind: "public", workspace: "T1" } as const;
/** Ana's DM with Neo, and a private channel of T1. */
const DM = "slack:T1:D_ANA";
const ANA_DM = { kind: "dm", workspace: "T1" } as const;
const PRIVATE = "slack:T1:G1:1700000000.000200";
const PRIVATE_PLACE = { kind: "private", workspace: "T1" } as const;
/** A recall from the user's DM: every record of theirs is visible there. */
const speaker = (userKey: string) => ({
  speaker: { userKey, displayName: userKey.split(":")[2]! },
  place: { kind: "dm", workspace: "T1" } as const,
});

/** One exchange as the loop records it: `speaker`'s message (with its speaker) and Neo's answer. */
const exchange = (speaker: string, user: string, answer: string): Message[] => [
  { role: "user", content: user, speaker: { userKey: speaker, displayName: speaker.split(":")[2]! } },
  { role: "assistant", content: answer },
];

const reply = (obj: unknown) => ({ reply: { text: typeof obj === "string" ? obj : JSON.stringify(obj) } });
/** The cheap model's answer for a one-conversation prompt. */
const answer = (entry: object) => JSON.stringify({ conversations: [{ conversation: 1, ...entry }] });
const empty = { conversations: [] };

/**
 * A naive cheap model: each `USER:` line of a conversation section's turns becomes a fact of that
 * section, and it asks every section to be remembered everywhere (only the user's own words there
 * may make it so).
 */
function promoteUserLines(req: ScriptedRequest) {
  const prompt = String(req.messages[0]!.content);
  const sections = prompt.split(/^### CONVERSATION \d+ ###$/m).slice(1);
  const conversations = sections.map((text, i) => ({
    conversation: i + 1,
    facts: text
      .split("\n")
      .filter((l) => l.startsWith("USER: "))
      .map((l) => l.slice("USER: ".length)),
    remember_everywhere: true,
  }));
  return { text: JSON.stringify({ conversations }) };
}

/** A promise and the function that settles it: holds a scripted answer open until released. */
function gate() {
  let open!: () => void;
  const held = new Promise<void>((r) => {
    open = r;
  });
  return { held, open };
}

for (const { name, factory, skip } of WITH_CLUSTER) {
  describe.skipIf(skip)(`memory port on ${name}`, () => {
    let backend: Backend;
    let store: Store;
    let ep: ScriptedOpenAI;
    let memory: Memory;
    const setup = async (
      test: string,
      opts: {
        depth?: number;
        concurrency?: number;
        foreground?: Foreground;
        maxDeferMs?: number;
        quietMs?: number;
      } = {},
    ) => {
      backend = factory(`memory-${test}`);
      store = await backend.open();
      ep = await startScriptedOpenAI();
      const { llm } = createLlmForTest(ep, { NEO_CHEAP_MODEL: "cheap-model" });
      memory = createMemory({
        store,
        llm,
        writebackDepth: opts.depth,
        writebackConcurrency: opts.concurrency,
        foreground: opts.foreground,
        writebackMaxDeferMs: opts.maxDeferMs,
        // The other properties are shown on jobs that start at once; the pause has its own test.
        writebackQuietMs: opts.quietMs ?? 0,
      });
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
          text: `Here you go:\n\`\`\`json\n${answer({
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
        place: CHANNEL,
        transcript: exchange(ANA, "I'm Ana and our prod cluster is eks-prod-7", "Nice to meet you, Ana."),
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
        place: CHANNEL,
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

      await memory.pager.setGoal(ANA, "Migrate the cluster to eks-prod-8", {
        conversation: CONV,
        learned: CHANNEL,
      });
      const withGoal = await memory.port.fault({
        user: ANA,
        conversation: CONV,
        place: CHANNEL,
        query: "hi",
        activeGoal: "hi",
        live: [],
      });
      expect(withGoal.pinned).toContain("Open goal (set earlier): Migrate the cluster to eks-prod-8");

      const bens = await memory.port.fault({
        user: BEN,
        conversation: "slack:T1:C1:other",
        place: CHANNEL,
        query: "is the prod cluster healthy?",
        activeGoal: "",
        live: [],
      });
      expect(bens.retrieved + bens.patterns + bens.recalled).toBe("");
      expect(bens.pinned).not.toContain("Ana");
    });

    it("writes nothing and does not crash when the model answers garbage or fails", async () => {
      // One at a time, three users: each job gets its own call (no coalescing), in order.
      await setup("garbage", { concurrency: 1 });
      const unreadBefore = (await metrics.writebackUnread.get()).values[0]?.value ?? 0;
      ep.script(
        reply("I could not find anything, sorry!"),
        reply("{ this is not json ]"),
        { reply: { kind: "error", status: 500 } },
        { reply: { kind: "error", status: 500 } },
      );
      for (const [i, user] of [ANA, BEN, CAT].entries())
        memory.port.writeBack({
          user,
          conversation: CONV,
          place: CHANNEL,
          transcript: exchange(user, `message ${i}`, `answer ${i}`),
        });
      await memory.drained();
      const stats = memory.stats();
      expect(stats.processed + stats.failed).toBe(3);
      expect(stats.failed).toBe(1);
      // The prose and the broken JSON were answers not understood: counted (and logged).
      expect(stats.unread).toBe(2);
      expect((await metrics.writebackUnread.get()).values[0]?.value).toBe(unreadBefore + 2);
      expect(stats.written).toEqual({
        facts: 0,
        userFacts: 0,
        patterns: 0,
        outcomes: 0,
        constraints: 0,
        goals: 0,
      });
      for (const user of [ANA, BEN, CAT]) {
        expect(await memory.pager.records(user)).toEqual([]);
        expect((await memory.pager.exportUser(user)).turns).toHaveLength(1);
      }
    });

    it("lets 8 jobs per user wait: that user's 9th waiting is dropped and counted, another user's is taken", async () => {
      // One consolidation at a time: Ana's first, held open, leaves no slot for her full queue.
      await setup("drops", { concurrency: 1 });
      const ana = gate();
      // Ana's first consolidation is held open so her next jobs wait behind it.
      ep.script({
        match: (r) => String(r.messages[0]!.content).includes("job 0"),
        reply: { text: JSON.stringify(empty), stream: { beforeDelta: () => ana.held } },
      });
      ep.script(reply(empty), reply(empty));
      const accepted: boolean[] = [];
      for (let i = 0; i < 10; i++) {
        memory.port.writeBack({
          user: ANA,
          conversation: i % 2 ? DM : CONV,
          place: i % 2 ? ANA_DM : CHANNEL,
          transcript: exchange(ANA, `job ${i}`, "ok"),
        });
        accepted.push(memory.stats().drops === 0);
        if (i === 0) await ep.waitForRequest(1);
      }
      // One running, 8 waiting: the 10th is Ana's 9th waiting.
      expect(accepted).toEqual([true, true, true, true, true, true, true, true, true, false]);
      memory.port.writeBack({
        user: BEN,
        conversation: CONV,
        place: CHANNEL,
        transcript: exchange(BEN, "ben", "ok"),
      });
      expect(memory.stats()).toMatchObject({ capacity: 8, drops: 1, depth: 10 });
      ana.open();
      await memory.drained();
      // Ana's 8 waiting jobs, of two conversations, were coalesced into one call; then Ben's.
      expect(memory.stats()).toMatchObject({ depth: 0, drops: 1, processed: 10, calls: 3 });
      const prompts = ep.requests
        .filter((r) => r.purpose === "writeback")
        .map((r) => String(r.messages[0]!.content));
      expect(prompts).toHaveLength(3);
      for (let i = 1; i < 9; i++) expect(prompts[1]).toContain(`USER: job ${i}`);
      expect(prompts[2]).toContain("USER: ben");
      expect(prompts[2]).not.toContain("job");
      expect(prompts.join()).not.toContain("job 9");
    });

    it("while turns run, a user's jobs wait until their queue is full, then all of them go in one call: none dropped", async () => {
      const turns = createTurnGauge();
      const endTurn = turns.begin();
      await setup("defer-full", { foreground: turns, maxDeferMs: 600_000 });
      ep.script(reply(empty), reply(empty));
      const job = (i: number) => ({
        user: ANA,
        conversation: CONV,
        place: CHANNEL,
        transcript: exchange(ANA, `job ${i}`, "ok"),
      });
      for (let i = 0; i < 7; i++) memory.port.writeBack(job(i));
      expect(memory.stats()).toMatchObject({ depth: 7, running: 0 });
      // The 8th fills her queue: her consolidation starts although the turn still runs.
      memory.port.writeBack(job(7));
      expect(memory.stats()).toMatchObject({ depth: 8, running: 1 });
      // The 9th waits in her emptied queue, for her call and then for the turn.
      memory.port.writeBack(job(8));
      await ep.waitForRequest(1);
      expect(memory.stats()).toMatchObject({ depth: 9, drops: 0 });
      endTurn();
      await memory.drained();
      expect(memory.stats()).toMatchObject({ depth: 0, drops: 0, processed: 9, calls: 2 });
      const prompts = ep.requests.map((r) => String(r.messages[0]!.content));
      for (let i = 0; i < 8; i++) expect(prompts[0]).toContain(`USER: job ${i}`);
      expect(prompts[1]).toContain("USER: job 8");
      expect(prompts[1]).not.toContain("USER: job 7");
    });

    it("a job waits for running turns at most the bound, then is consolidated while they still run", async () => {
      const turns = createTurnGauge();
      const endTurn = turns.begin();
      await setup("defer-bound", { foreground: turns, maxDeferMs: 50 });
      ep.script(reply(empty));
      memory.port.writeBack({
        user: BEN,
        conversation: CONV,
        place: CHANNEL,
        transcript: exchange(BEN, "ben", "ok"),
      });
      expect(memory.stats()).toMatchObject({ depth: 1, running: 0 });
      await ep.waitForRequest(1);
      expect(turns.running).toBe(1);
      await memory.drained();
      expect(memory.stats()).toMatchObject({ depth: 0, processed: 1, calls: 1 });
      endTurn();
    });

    it("a user's turns in quick succession wait for them to pause and go in one call; a flush starts them at once", async () => {
      await setup("quiet", { quietMs: 600_000 });
      ep.script(reply(empty));
      for (let i = 0; i < 3; i++)
        memory.port.writeBack({
          user: ANA,
          conversation: i === 1 ? DM : CONV,
          place: i === 1 ? ANA_DM : CHANNEL,
          transcript: exchange(ANA, `job ${i}`, "ok"),
        });
      // No turn runs, but Ana has not paused: nothing is asked of the cheap model yet.
      expect(memory.stats()).toMatchObject({ depth: 3, running: 0, calls: 0 });
      await memory.drained();
      expect(memory.stats()).toMatchObject({ depth: 0, processed: 3, calls: 1 });
      const prompt = String(ep.requests[0]!.messages[0]!.content);
      for (let i = 0; i < 3; i++) expect(prompt).toContain(`USER: job ${i}`);
    });

    it("runs at most the configured consolidations at once, across users", async () => {
      await setup("concurrency", { concurrency: 2 });
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      for (let i = 0; i < 3; i++)
        ep.script({ reply: { text: JSON.stringify(empty), stream: { beforeDelta: () => held } } });
      for (const user of [ANA, BEN, CAT])
        memory.port.writeBack({
          user,
          conversation: CONV,
          place: CHANNEL,
          transcript: exchange(user, `from ${user}`, "ok"),
        });
      await ep.waitForRequest(2);
      expect(memory.stats()).toMatchObject({ depth: 3, running: 2 });
      release();
      await memory.drained();
      expect(memory.stats()).toMatchObject({ depth: 0, running: 0, processed: 3, calls: 3 });
    });

    it("one user's turns of several conversations, faster than the model: none dropped, coalesced, each kept where it ran", async () => {
      await setup("coalesce");
      const where = [
        { conversation: DM, place: ANA_DM },
        { conversation: PRIVATE, place: PRIVATE_PLACE },
        { conversation: CONV, place: CHANNEL },
      ] as const;
      const words = (i: number) => (i === 4 ? "turn 4: remember this everywhere" : `turn ${i}`);
      const turn = (i: number) =>
        memory.port.writeBack({
          user: ANA,
          ...where[i % 3]!,
          transcript: exchange(ANA, words(i), "ok"),
        });
      const first = gate();
      const second = gate();
      ep.fallback(promoteUserLines);
      ep.script(
        {
          match: (r) => String(r.messages[0]!.content).includes("USER: turn 0"),
          reply: (r) => ({ ...promoteUserLines(r), stream: { beforeDelta: () => first.held } }),
        },
        {
          match: (r) => String(r.messages[0]!.content).includes("USER: turn 1"),
          reply: (r) => ({ ...promoteUserLines(r), stream: { beforeDelta: () => second.held } }),
        },
      );
      turn(0);
      await ep.waitForRequest(1);
      // 8 more while the first call runs: all wait (at most 8), none is dropped.
      for (let i = 1; i <= 8; i++) turn(i);
      expect(memory.stats()).toMatchObject({ drops: 0, depth: 9 });
      first.open();
      await ep.waitForRequest(2);
      // 3 more while the coalesced call runs.
      for (let i = 9; i <= 11; i++) turn(i);
      second.open();
      await memory.drained();
      expect(memory.stats()).toMatchObject({ drops: 0, failed: 0, processed: 12, calls: 3 });

      const prompts = ep.requests.map((r) => String(r.messages[0]!.content));
      expect(prompts).toHaveLength(3);
      // The second call holds turns 1-8, a section per conversation in the order they waited.
      const sections = prompts[1]!.split(/^### CONVERSATION \d+ ###$/m).slice(1);
      expect(sections).toHaveLength(3);
      for (let i = 1; i <= 8; i++) expect(sections[(i - 1) % 3]).toContain(`USER: ${words(i)}`);
      expect(sections[0]).toContain("3 turns since the last write-back");

      // Every turn's fact is learned in its own conversation and place; only the private
      // channel's section of the second call (whose words say "everywhere") is widened.
      const facts = (await memory.pager.records(ANA)).filter((r) => r.kind === "fact");
      expect(facts).toHaveLength(12);
      for (let i = 0; i < 12; i++) {
        const fact = facts.find((r) => r.statement === words(i));
        const widened = i % 3 === 1 && i >= 1 && i <= 8;
        expect(fact, words(i)).toMatchObject({
          source: where[i % 3]!.conversation,
          learned: { ...where[i % 3]!.place, ...(widened ? { everywhere: true } : {}) },
        });
        if (!widened) expect(fact!.learned?.everywhere, words(i)).toBeUndefined();
      }
    });

    it("a user's queue that fills while their consolidation runs gets another; the cortex is written in the order they started", async () => {
      await setup("full-queue");
      const GOAL = "Migrate the billing service to eks-prod-8";
      const first = gate();
      ep.script(
        {
          match: (r) => String(r.messages[0]!.content).includes("USER: turn 0"),
          reply: {
            text: answer({ goal: { statement: GOAL, status: "active" } }),
            stream: { beforeDelta: () => first.held },
          },
        },
        // Answered at once, while the first is still held: its goal change must wait for the first's.
        { reply: { text: answer({ goal: { statement: GOAL, status: "done" } }) } },
      );
      for (let i = 0; i <= 8; i++) {
        memory.port.writeBack({
          user: ANA,
          conversation: DM,
          place: ANA_DM,
          transcript: exchange(ANA, `turn ${i}`, "ok"),
        });
        if (i === 0) await ep.waitForRequest(1);
      }
      await ep.waitForRequest(2);
      expect(memory.stats()).toMatchObject({ drops: 0, running: 2 });
      first.open();
      await memory.drained();
      expect(memory.stats()).toMatchObject({ drops: 0, processed: 9, calls: 2 });
      expect(memory.stats().written.goals).toBe(2);
      const goals = (await memory.pager.records(ANA)).filter((r) => r.kind === "goal");
      expect(goals).toMatchObject([{ statement: GOAL, status: "done" }]);
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
      const listed = JSON.stringify(await memory.list(ANA));
      expect(listed).toContain("Helix");
      expect(listed).toContain("secret/ana/deploy");
      expect(listed).not.toContain("Emacs");
      expect(await memory.list("slack:T1:U_NEW")).toEqual([]);
      expect(await memory.forget(ANA)).toBe(2);
      expect(await memory.list(ANA)).toEqual([]);
      expect(JSON.stringify(await memory.list(BEN))).toContain("Emacs");
      const nobody = await memory.memoryRecall("anything", speaker("slack:T1:U_NEW"));
      expect(nobody).toEqual({ content: "Nothing is remembered about this user yet.", isError: false });
    });

    it("forget leaves none of the user's facts in the store, nor on disk", async () => {
      await setup("forget-erases");
      await memory.pager.rememberUserFact(ANA, "Ana's favourite editor is Helix-erasable");
      await memory.pager.rememberFact(ANA, "Ana's deploy key is in vault path secret/ana/erasable");
      await memory.pager.rememberUserFact(BEN, "Ben's favourite editor is Emacs-kept");
      const ana = ["Helix-erasable", "secret/ana/erasable"];
      expect(await foundInStore(store, ana)).toHaveLength(2);
      await memory.forget(ANA);
      expect(await foundInStore(store, ana)).toEqual([]);
      expect(await foundInStore(store, ["Emacs-kept"])).toHaveLength(1);
      if (backend.options.redisUrl === undefined) {
        expect(foundOnDisk(backend.options.dataDir, ana)).toEqual([]);
        expect(foundOnDisk(backend.options.dataDir, ["Emacs-kept"])).toHaveLength(1);
      }
    });
  });
}
