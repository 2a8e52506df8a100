/**
 * The write-back consolidator: after each completed turn the cheap model reads the transcript and
 * promotes durable learnings into the speaker's cortex. Best effort and bounded: at most `depth`
 * jobs (waiting + running) are held; beyond that a job is dropped and counted. One worker runs jobs
 * in order. Nothing here ever throws into the loop or delays an answer.
 */

import type { LlmClient } from "../../core/llm/types.js";
import { log } from "../../core/log.js";
import type { WriteBackJob } from "../../core/memory-port.js";
import { metrics } from "../../ops/metrics.js";
import type { Store } from "../../store/types.js";
import type { Pager } from "../cortex/pager.js";
import { applyWriteback } from "./apply.js";
import { parseWriteback } from "./parse.js";
import { renderForWriteback, WRITEBACK_PROMPT } from "./prompt.js";

/** Seed default queue depth. */
export const WRITEBACK_QUEUE_DEPTH = 8;

export interface ConsolidatorStats {
  /** Jobs held right now (waiting + running). */
  depth: number;
  capacity: number;
  /** Jobs dropped because the queue was full. */
  drops: number;
  /** Jobs finished (including those that found nothing durable). */
  processed: number;
  /** Jobs that failed (model or store error); logged, never thrown. */
  failed: number;
  /** Items applied, by kind, since start (a deduped repeat or a reinforcement counts as applied). */
  written: {
    facts: number;
    userFacts: number;
    patterns: number;
    outcomes: number;
    constraints: number;
    goals: number;
  };
}

export interface Consolidator {
  /** Queue a job. False (and counted) when the queue is full. Never throws. */
  enqueue(job: WriteBackJob): boolean;
  stats(): ConsolidatorStats;
  /** Resolves once every queued job has finished (for tests and graceful shutdown). */
  drained(): Promise<void>;
}

export interface ConsolidatorOptions {
  llm: LlmClient;
  pager: Pager;
  store: Store;
  depth?: number;
  /** Per-job limit on the model call (default 60 s). */
  timeoutMs?: number;
  maxTokens?: number;
}

const wbLog = log.child({ component: "writeback" });

export function createConsolidator(opts: ConsolidatorOptions): Consolidator {
  const capacity = opts.depth ?? WRITEBACK_QUEUE_DEPTH;
  const queue: WriteBackJob[] = [];
  let running = false;
  const stats: ConsolidatorStats = {
    depth: 0,
    capacity,
    drops: 0,
    processed: 0,
    failed: 0,
    written: { facts: 0, userFacts: 0, patterns: 0, outcomes: 0, constraints: 0, goals: 0 },
  };
  let idleWaiters: Array<() => void> = [];

  async function runJob(job: WriteBackJob): Promise<void> {
    if (!opts.store.healthy()) throw new Error("store unavailable; write-back skipped");
    // The open goal on record, so the model can say this turn finished it.
    const { activeGoal } = await opts.pager.pinned(job.user);
    const completion = await opts.llm.complete({
      role: "cheap",
      system: WRITEBACK_PROMPT,
      messages: [{ role: "user", content: renderForWriteback(job.transcript, activeGoal) }],
      json: true,
      maxTokens: opts.maxTokens ?? 1024,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
      tags: { purpose: "writeback", conversation: job.conversation, user: job.user },
    });
    const extract = parseWriteback(completion.content ?? "");
    const counts = await applyWriteback(opts.pager, job.user, job.conversation, extract);
    stats.written.facts += counts.facts;
    stats.written.userFacts += counts.userFacts;
    stats.written.patterns += counts.patterns;
    stats.written.outcomes += counts.outcomes;
    stats.written.constraints += counts.constraints;
    stats.written.goals += counts.goals;
    wbLog.debug({ conversation: job.conversation, ...counts }, "write-back applied");
  }

  async function work(): Promise<void> {
    running = true;
    while (queue.length > 0) {
      const job = queue[0]!;
      try {
        await runJob(job);
        stats.processed++;
      } catch (err) {
        stats.failed++;
        wbLog.warn({ err: (err as Error).message, conversation: job.conversation }, "write-back failed");
      }
      queue.shift();
      stats.depth = queue.length;
      metrics.writebackDepth.set(stats.depth);
    }
    running = false;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  }

  return {
    enqueue(job) {
      if (queue.length >= capacity) {
        stats.drops++;
        metrics.writebackDropped.inc();
        wbLog.warn(
          { conversation: job.conversation, drops: stats.drops },
          "write-back queue full; job dropped",
        );
        return false;
      }
      queue.push(job);
      stats.depth = queue.length;
      metrics.writebackDepth.set(stats.depth);
      if (!running) void work();
      return true;
    },
    stats: () => ({ ...stats, written: { ...stats.written } }),
    drained: () =>
      !running && queue.length === 0 ? Promise.resolve() : new Promise<void>((r) => idleWaiters.push(r)),
  };
}
