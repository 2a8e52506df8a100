/**
 * Fairness bench (DESIGN.md, Fairness): Alice sends 200 mentions at once (200 conversations), and
 * once every slot is busy with them Bob sends one. Goal: Bob's answer waits for at most one running
 * turn. Real Conversations + agent loop + openai SDK against a local model with a fixed latency, on
 * the file store. Measured in the same run: how long Bob's turn waited to start, against the median
 * duration of the turns running meanwhile (the baseline: "one running turn"); how many of Alice's
 * turns started after Bob asked and before his (goal: 0); and when Alice's last answer came, which is
 * what Bob would wait behind a first-come-first-served queue. A second run keeps
 * the default per-user turn rate: Alice's burst beyond it is told once and waits for the refill,
 * and Bob does not wait at all. Run alone: `npx tsx bench/run.ts fairness`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.js";
import { createAgent } from "../src/core/agent/agent.js";
import { createConversations } from "../src/core/conversations/create-conversations.js";
import { conversationLimits } from "../src/core/conversations/limits.js";
import type {
  ConversationIO,
  ConversationsService,
  InboundMessage,
} from "../src/core/conversations/types.js";
import { setLogLevel } from "../src/core/log.js";
import { createStore } from "../src/store/create-store.js";
import type { BucketLimits } from "../src/store/types.js";
import { agentDeps, fixedLatencyModel } from "./support/fixed-model.js";
import type { BenchSection } from "./types.js";

const ALICE_MENTIONS = 200;
const MODEL_LATENCY_MS = 100;
const SLOTS = 8;
const ROOMY: BucketLimits = { perMinute: 1_000_000, burst: 1_000_000 };

interface Run {
  conversations: ConversationsService;
  /** When each conversation's turn started (the loop was entered) and its answer was said. */
  started: Map<string, number>;
  answered: Map<string, number>;
  notices: string[];
  close(): Promise<void>;
}

async function open(url: string, userTurns: BucketLimits): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "neo-bench-fair-"));
  const store = await createStore({ dataDir: dir, prefix: "bench:" });
  const deps = agentDeps(url);
  const started = new Map<string, number>();
  const answered = new Map<string, number>();
  const notices: string[] = [];
  const io = (conversation: string): ConversationIO => ({
    reporter: {
      say: async () => {
        answered.set(conversation, performance.now());
      },
      status: async () => {},
      notice: async (text) => {
        notices.push(text);
      },
    },
    approvals: { present: async () => undefined, update: async () => {} },
  });
  const conversations = createConversations({
    store,
    // Instrumented only to see when each turn enters the loop.
    newAgent: (state) => {
      const agent = createAgent(deps, state);
      return {
        ...agent,
        chat: (input, ctx) => {
          started.set(ctx.conversation, performance.now());
          return agent.chat(input, ctx);
        },
      };
    },
    io,
    instanceId: "bench-fair",
    limits: { ...conversationLimits(loadConfig({})), maxConcurrentTurns: SLOTS, userTurns },
  });
  await conversations.start();
  return {
    conversations,
    started,
    answered,
    notices,
    async close() {
      await conversations.shutdown(2000);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let seq = 0;
const mention = (who: string, n: number): InboundMessage => ({
  id: `fair-${++seq}`,
  conversation: `console:bench:${who}:${n}-${seq}`,
  speaker: { userKey: `console:bench:${who}`, displayName: who },
  text: `${who} asks ${n}`,
  shared: true,
  place: { kind: "public", workspace: "bench" },
  receivedAt: Date.now(),
});

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 2));
}

interface Burst {
  /** Bob's submit to his turn's start. */
  bobWait: number;
  /** Median duration (start to answer) of Alice's turns that were running when Bob asked. */
  runningTurn: number;
  /** Alice's turns that started after Bob asked and before his turn. */
  overtook: number;
  /** Alice's first mention to her last answer. */
  alice?: number;
}

/** Alice's burst fills every slot; Bob asks once. */
async function burst(run: Run, waitForAlice: boolean): Promise<Burst> {
  const t0 = performance.now();
  const alice = Array.from({ length: ALICE_MENTIONS }, (_, i) => mention("alice", i));
  for (const m of alice) await run.conversations.submit(m);
  await until(() => run.conversations.stats().running === Math.min(SLOTS, run.conversations.stats().active));
  const bob = mention("bob", 1);
  const b0 = performance.now();
  await run.conversations.submit(bob);
  await until(() => run.answered.has(bob.conversation));
  const bobStart = run.started.get(bob.conversation)!;
  const running = alice.filter((m) => (run.started.get(m.conversation) ?? Infinity) < b0);
  // Those still running when Bob asked end soon after; wait for them to know their durations.
  await until(() => running.every((m) => run.answered.has(m.conversation)));
  const durations = running
    .map((m) => run.answered.get(m.conversation)! - run.started.get(m.conversation)!)
    .sort((x, y) => x - y);
  const out: Burst = {
    bobWait: bobStart - b0,
    runningTurn: durations[Math.floor(durations.length / 2)]!,
    overtook: alice.filter((m) => {
      const at = run.started.get(m.conversation);
      return at !== undefined && at > b0 && at < bobStart;
    }).length,
  };
  if (!waitForAlice) return out;
  await until(() => alice.every((m) => run.answered.has(m.conversation)));
  return { ...out, alice: Math.max(...alice.map((m) => run.answered.get(m.conversation)!)) - t0 };
}

export async function run(): Promise<BenchSection> {
  // A turn line per turn for 400 turns would drown the runner's output.
  setLogLevel("warn");
  const model = await fixedLatencyModel(MODEL_LATENCY_MS);
  const fair = await open(model.url, ROOMY);
  const slots = await burst(fair, true);
  await fair.close();
  const rateCfg = loadConfig({});
  const rate = { perMinute: rateCfg.NEO_USER_TURNS_PER_MINUTE, burst: rateCfg.NEO_USER_TURN_BURST };
  const limited = await open(model.url, rate);
  const throttled = await burst(limited, false);
  const told = limited.notices.filter((n) => n.startsWith("You've sent me a lot")).length;
  await limited.close();
  model.server.close();
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const row = (label: string, b: Burst, alice: string, told: string) =>
    `| ${label} | ${ms(b.bobWait)} | ${ms(b.runningTurn)} | ${(b.bobWait / b.runningTurn).toFixed(2)} | ${b.overtook} | ${alice} | ${told} |`;
  return {
    title: "Fairness",
    markdown: [
      `Alice sends ${ALICE_MENTIONS} mentions at once (one conversation each); once all ${SLOTS} slots run hers, Bob sends one.`,
      `Real Conversations + agent loop + openai SDK against a local model answering after ${MODEL_LATENCY_MS} ms, file store.`,
      "Bob's wait = his submit to his turn's start; the baseline, same run, is one running turn: the median duration",
      "(start to answer) of Alice's turns that were running when he asked. Goal: wait ≤ 1 running turn, and none of",
      "Alice's later turns started before his. \"Alice's last answer\" is what Bob would wait behind her in a single",
      "first-come-first-served queue.",
      "",
      "| per-user turn rate | Bob's wait | one running turn | wait in running turns | Alice's turns started ahead of Bob | Alice's last answer | Alice told |",
      "| --- | --- | --- | --- | --- | --- | --- |",
      row("unlimited (slots alone)", slots, ms(slots.alice ?? 0), "–"),
      row(
        `default (${rate.perMinute}/min, burst ${rate.burst})`,
        throttled,
        `(over ${Math.round(((ALICE_MENTIONS - rate.burst) * 60) / rate.perMinute)} s by design)`,
        `${told}×`,
      ),
    ].join("\n"),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await run();
  console.log(`## ${s.title}\n\n${s.markdown}`);
}
