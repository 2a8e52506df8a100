/**
 * Conversations bench: turns per second and memory per idle conversation with 1,000
 * conversations on one process (real Conversations + real agent loop + real openai SDK against a
 * local model of fixed latency), and the cost of appending one event to a conversation's log at
 * transcript lengths 10 and 1,000 (goal: flat). Run alone: `npx tsx bench/conversations.bench.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createAgent } from "../src/core/agent/agent.js";
import { createConversations } from "../src/core/conversations/create-conversations.js";
import { createJournal } from "../src/core/conversations/journal.js";
import type { LogEntry } from "../src/core/conversations/log-entry.js";
import type { ConversationIO } from "../src/core/conversations/types.js";
import { createStore } from "../src/store/create-store.js";
import type { Store } from "../src/store/types.js";
import { probeRedis, uniquePrefix } from "../test/support/redis.js";
import { agentDeps, fixedLatencyModel } from "./support/fixed-model.js";
import type { BenchSection } from "./types.js";

const CONVERSATIONS = 1000;
const MODEL_LATENCY_MS = 20;
const SLOTS = 8;
const APPENDS = 300;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const noApprovals = { present: async () => undefined, update: async () => {} };

/** Baseline, same run: the bare loop, one fresh agent per turn, SLOTS turns at a time, no layer. */
async function bareLoop(): Promise<number> {
  const model = await fixedLatencyModel(MODEL_LATENCY_MS);
  const deps = agentDeps(model.url);
  const reporter = { say: async () => {}, status: async () => {}, notice: async () => {} };
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: SLOTS }, async () => {
      while (next < CONVERSATIONS) {
        const i = next++;
        await createAgent(deps).chat(
          { text: `hello ${i}`, speaker: { userKey: `console:bench:u${i}`, displayName: `u${i}` } },
          {
            conversation: `console:bench:c:${i}`,
            shared: false,
            place: { kind: "dm", workspace: "local" },
            reporter,
            approvals: noApprovals,
            signal: new AbortController().signal,
          },
        );
      }
    }),
  );
  model.server.close();
  return CONVERSATIONS / ((performance.now() - started) / 1000);
}

async function turnsAndMemory(store: Store): Promise<{ turnsPerSec: number; bytesPerIdle: number }> {
  const model = await fixedLatencyModel(MODEL_LATENCY_MS);
  const deps = agentDeps(model.url);
  let answered = 0;
  let allAnswered: () => void = () => {};
  const done = new Promise<void>((r) => {
    allAnswered = r;
  });
  const io: ConversationIO = {
    reporter: {
      say: async () => {
        if (++answered === CONVERSATIONS) allAnswered();
      },
      status: async () => {},
      notice: async () => {},
    },
    approvals: noApprovals,
  };
  const conversations = createConversations({
    store,
    newAgent: (state) => createAgent(deps, state),
    io: () => io,
    instanceId: "bench",
    limits: {
      maxConcurrentTurns: SLOTS,
      // The bench measures scheduling, not the per-user rate: no bucket holds anyone back.
      userTurns: { perMinute: 1_000_000, burst: 1_000_000 },
      recallTurns: 16,
      idleEvictMs: 600_000,
      retentionMs: 30 * 86_400_000,
      leaseMs: 30_000,
      dedupeTtlMs: 600_000,
      sweepMs: 600_000,
    },
  });
  await conversations.start();
  const before = heapMb();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONVERSATIONS }, (_, i) =>
      conversations.submit({
        id: `bench-${i}`,
        conversation: `console:bench:c:${i}`,
        speaker: { userKey: `console:bench:u${i}`, displayName: `u${i}` },
        text: `hello ${i}`,
        shared: false,
        place: { kind: "dm", workspace: "local" },
        receivedAt: Date.now(),
      }),
    ),
  );
  await done;
  const seconds = (performance.now() - started) / 1000;
  // Let the workers release their leases and go idle before measuring.
  while (conversations.stats().running > 0 || conversations.stats().waitingForSlot > 0) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 200));
  const after = heapMb();
  await conversations.shutdown(1000);
  model.server.close();
  return {
    turnsPerSec: CONVERSATIONS / seconds,
    bytesPerIdle: (after - before) / CONVERSATIONS,
  };
}

async function appendCost(store: Store, length: number): Promise<number> {
  const journal = createJournal(store, 60_000, 30 * 86_400_000);
  const conv = `console:bench:append:${length}`;
  const event = (i: number): LogEntry => ({
    type: "message",
    message: { role: "user", content: `message ${i} ${"x".repeat(200)}` },
    at: Date.now(),
  });
  let logLength = await journal.logLength(conv);
  for (let i = logLength; i < length; i += 100) {
    const batch = Array.from({ length: Math.min(100, length - i) }, (_, k) => event(i + k));
    logLength = await journal.appendLog(conv, batch, logLength);
  }
  const samples: number[] = [];
  for (let i = 0; i < APPENDS; i++) {
    const t0 = performance.now();
    logLength = await journal.appendLog(conv, [event(i)], logLength);
    samples.push(performance.now() - t0);
    // Back to the measured length so every sample sees the same transcript length.
    if (logLength > length + 50) {
      await store.delete(`conv:log:${conv}`);
      logLength = 0;
      for (let j = 0; j < length; j += 100) {
        const batch = Array.from({ length: Math.min(100, length - j) }, (_, k) => event(j + k));
        logLength = await journal.appendLog(conv, batch, logLength);
      }
    }
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

async function section(kind: "file" | "redis", store: Store, bare: number): Promise<string[]> {
  const at10 = await appendCost(store, 10);
  const at1000 = await appendCost(store, 1000);
  const t = await turnsAndMemory(store);
  return [
    `| ${kind} | ${t.turnsPerSec.toFixed(0)} | ${(t.turnsPerSec / bare).toFixed(2)} | ${(t.bytesPerIdle / 1024).toFixed(1)} KiB | ` +
      `${(at10 * 1000).toFixed(0)} µs | ${(at1000 * 1000).toFixed(0)} µs | ${(at1000 / at10).toFixed(2)} |`,
  ];
}

export async function run(): Promise<BenchSection> {
  const rows: string[] = [];
  const bare = await bareLoop();
  const dir = mkdtempSync(join(tmpdir(), "neo-bench-conv-"));
  const file = await createStore({ dataDir: dir, prefix: "bench:" });
  rows.push(...(await section("file", file, bare)));
  await file.close();
  rmSync(dir, { recursive: true, force: true });
  const redis = await probeRedis();
  if (redis.ok) {
    const store = await createStore({
      redisUrl: redis.url,
      dataDir: dir,
      prefix: uniquePrefix("bench-conv"),
    });
    try {
      rows.push(...(await section("redis", store, bare)));
    } finally {
      // A bench run leaves nothing in the shared Redis (as a test run does).
      for (const k of await store.keys("")) await store.delete(k);
      await store.close();
    }
  }
  return {
    title: "Conversations",
    markdown: [
      `${CONVERSATIONS} conversations, one message each, on one process: real Conversations + agent loop + openai SDK`,
      `against a local model answering after a fixed ${MODEL_LATENCY_MS} ms, ${SLOTS} concurrent turns`,
      `(ideal ${SLOTS * (1000 / MODEL_LATENCY_MS)}/s). Baseline, same run: the bare loop with no conversations layer`,
      `(fresh agent per turn, ${SLOTS} at a time, nothing persisted): ${bare.toFixed(0)} turns/s; "vs bare" = ratio to it.`,
      "Memory per idle conversation = heap growth after all turns, agents still",
      `in memory (not yet evicted), over ${CONVERSATIONS}. Append cost = median of ${APPENDS} one-event appends`,
      "to a conversation log already holding 10 or 1,000 events (goal: ratio ≈ 1, flat).",
      "",
      "| store | turns/s | vs bare | memory per idle conversation | append @10 | append @1,000 | ratio |",
      "| --- | --- | --- | --- | --- | --- | --- |",
      ...rows,
      ...(redis.ok ? [] : ["", `Redis rows skipped: ${redis.reason}`]),
    ].join("\n"),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await run();
  console.log(`## ${s.title}\n\n${s.markdown}`);
  process.exit(0);
}
