/**
 * Acceptance: two processes share one Redis and both receive the same 200 messages over 50
 * threads. Every message is answered exactly once and each thread's messages reach the model in
 * the order they were sent.
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RESUME_NOTE } from "../../src/core/conversations/inbound.js";
import { INTERRUPTED_TOOL_RESULT } from "../../src/core/conversations/replay.js";
import type { InboundMessage } from "../../src/core/conversations/types.js";
import { CONVERSATION_HEADER, requestHeaders } from "../../src/core/llm/request-headers.js";
import { USER_MESSAGE_JOIN } from "../../src/core/llm/wire.js";
import { createStore } from "../../src/store/create-store.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { readSaid, startWorker, until, type WorkerProcess } from "./worker-process.js";

const redis = await probeRedis();
const THREADS = 50;
const PER_THREAD = 4;

function newUserTexts(req: ScriptedRequest): string[] {
  const out: string[] = [];
  for (let i = req.messages.length - 1; i >= 0 && req.messages[i]!.role !== "assistant"; i--) {
    const m = req.messages[i]!;
    // The request builder sends a run of user messages as one, texts separated by a blank line.
    if (m.role === "user") out.unshift(...String(m.content).split(USER_MESSAGE_JOIN));
  }
  return out;
}

describe.skipIf(!redis.ok)("two instances over one Redis", () => {
  let ep: ScriptedOpenAI | null = null;
  const workers: WorkerProcess[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    await ep?.close();
  });

  it("answers each of 200 messages delivered to both exactly once, in per-thread order", {
    timeout: 180_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "neo-two-"));
    ep = await startScriptedOpenAI();
    ep.fallback((req) => ({ text: `answered: ${newUserTexts(req).join(" | ")}`, delayMs: 5 }));
    const prefix = uniquePrefix("conv-two");
    const base = {
      WORKER_REDIS_URL: redis.url,
      WORKER_PREFIX: prefix,
      WORKER_ENDPOINT_URL: ep.url,
      WORKER_GATE_DIR: dir,
      WORKER_MAX_CONCURRENT: "8",
    };
    const outs = [join(dir, "a.jsonl"), join(dir, "b.jsonl")];
    const [a, b] = await Promise.all([
      startWorker({ ...base, WORKER_OUT: outs[0]!, WORKER_INSTANCE_ID: "a" }),
      startWorker({ ...base, WORKER_OUT: outs[1]!, WORKER_INSTANCE_ID: "b" }),
    ]);
    workers.push(a!, b!);

    const conv = (t: number) => `slack:T1:C1:th${t}`;
    const text = (t: number, n: number) => `t${t}-m${n}`;
    let accepted = 0;
    await Promise.all(
      Array.from({ length: THREADS }, async (_, t) => {
        for (let n = 0; n < PER_THREAD; n++) {
          const m: InboundMessage = {
            id: `ev-${t}-${n}`,
            conversation: conv(t),
            speaker: { userKey: `slack:T1:U${t}`, displayName: `U${t}` },
            text: text(t, n),
            shared: false,
            place: { kind: "dm", workspace: "local" },
            receivedAt: Date.now(),
          };
          const results = await Promise.all([a!.submit(m), b!.submit(m)]);
          accepted += results.filter((r) => r.accepted).length;
          expect(results.filter((r) => !r.accepted)).toEqual([{ accepted: false, reason: "duplicate" }]);
        }
      }),
    );
    expect(accepted).toBe(THREADS * PER_THREAD);

    const answered = () =>
      outs
        .flatMap(readSaid)
        .filter((s) => s.kind === "say")
        .flatMap((s) => s.text.replace(/^answered: /, "").split(" | "));
    await until("all 200 answered", () => answered().length >= THREADS * PER_THREAD, 150_000);

    const all = answered();
    const counts = new Map<string, number>();
    for (const t of all) counts.set(t, (counts.get(t) ?? 0) + 1);
    expect(all).toHaveLength(THREADS * PER_THREAD);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);

    for (let t = 0; t < THREADS; t++) {
      const header = requestHeaders({ purpose: "turn", conversation: conv(t) })[CONVERSATION_HEADER];
      const last = ep.requests.filter((r) => r.conversation === header).at(-1)!;
      const users = last.messages
        .filter((m) => m.role === "user")
        .flatMap((m) => String(m.content).split(USER_MESSAGE_JOIN));
      expect(users).toEqual(Array.from({ length: PER_THREAD }, (_, n) => text(t, n)));
    }
    const byInstance = (id: string) =>
      outs.flatMap(readSaid).filter((s) => s.kind === "say" && s.instanceId === id);
    console.log(
      `two-instances: ${all.length} answered, ${ep.requests.length} model requests, ` +
        `says a=${byInstance("a").length} b=${byInstance("b").length}`,
    );

    a!.child.kill("SIGTERM");
    b!.child.kill("SIGTERM");
    expect(await Promise.all([a!.exited, b!.exited])).toEqual([0, 0]);
  });

  it("takes over a dead instance's conversation after its lease expires and finishes the turn once", {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "neo-takeover-"));
    ep = await startScriptedOpenAI([
      {
        label: "tool call",
        reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "tk" } }] },
      },
    ]);
    ep.fallback((req) => ({ text: `answered: ${newUserTexts(req).join(" | ")}` }));
    const prefix = uniquePrefix("conv-takeover");
    const base = {
      WORKER_REDIS_URL: redis.url,
      WORKER_PREFIX: prefix,
      WORKER_ENDPOINT_URL: ep.url,
      WORKER_GATE_DIR: dir,
      WORKER_LEASE_MS: "1000",
    };
    const outs = [join(dir, "a.jsonl"), join(dir, "b.jsonl")];
    const [a, b] = await Promise.all([
      startWorker({ ...base, WORKER_OUT: outs[0]!, WORKER_INSTANCE_ID: "a" }),
      startWorker({ ...base, WORKER_OUT: outs[1]!, WORKER_INSTANCE_ID: "b" }),
    ]);
    workers.push(a!, b!);
    const m: InboundMessage = {
      id: "ev-takeover",
      conversation: "slack:T1:C1:takeover",
      speaker: { userKey: "slack:T1:U1", displayName: "U1" },
      text: "run the long job",
      shared: false,
      place: { kind: "dm", workspace: "local" },
      receivedAt: Date.now(),
    };
    await Promise.all([a!.submit(m), b!.submit(m)]);
    await until("the tool call is running", () => existsSync(join(dir, "tk.started")));
    const store = await createStore({ redisUrl: redis.url, dataDir: dir, prefix });
    const holder = await store.get<string>(`conv:lock:{${m.conversation}}`);
    await store.close();
    const [dead, alive] = holder?.startsWith("a#") ? [a!, b!] : [b!, a!];
    dead.child.kill("SIGKILL");
    await dead.exited;

    const says = () => outs.flatMap(readSaid).filter((s) => s.kind === "say");
    await until("the survivor finished the turn", () => says().length === 1);
    expect(says()[0]!.pid).toBe(alive.child.pid);
    expect(says()[0]!.text).toBe(`answered: ${RESUME_NOTE}`);
    const resumed = ep.requests.at(-1)!;
    expect(resumed.messages.find((x) => x.role === "tool")?.content).toBe(INTERRUPTED_TOOL_RESULT);
    writeFileSync(join(dir, "tk.open"), "");
    alive.child.kill("SIGTERM");
    expect(await alive.exited).toBe(0);
    expect(says()).toHaveLength(1);
  });
});
