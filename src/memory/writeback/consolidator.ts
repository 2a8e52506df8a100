/**
 * The write-back consolidator: after each completed turn the cheap model reads the transcript and
 * promotes durable learnings into the speaker's cortex. Best effort and bounded, per user as the
 * seed's one-user runtime has it: each user holds at most `depth` jobs (waiting + running); beyond
 * that *their* job is dropped and counted, never another user's. The cheap model runs at most
 * `concurrency` consolidations at once across all users, users served in turn; one user's jobs run
 * one batch at a time, and the jobs of one conversation waiting together are coalesced into one
 * call. Nothing here ever throws into the loop or delays an answer.
 */

import type { UserKey } from "../../core/keys.js";
import type { LlmClient } from "../../core/llm/types.js";
import { log } from "../../core/log.js";
import type { WriteBackJob } from "../../core/memory-port.js";
import { metrics } from "../../ops/metrics.js";
import type { Store } from "../../store/types.js";
import type { Pager } from "../cortex/pager.js";
import { applyWriteback, originOf } from "./apply.js";
import { parseWriteback } from "./parse.js";
import { renderForWriteback, WRITEBACK_PROMPT } from "./prompt.js";

/** Seed default queue depth, per user. */
export const WRITEBACK_QUEUE_DEPTH = 8;
/** Cheap-model consolidations running at once for the whole bot (`NEO_WRITEBACK_CONCURRENCY`). */
export const WRITEBACK_CONCURRENCY = 2;

export interface ConsolidatorStats {
  /** Jobs held right now (waiting + running), all users. */
  depth: number;
  /** Jobs one user may hold. */
  capacity: number;
  /** Jobs dropped because their user's queue was full. */
  drops: number;
  /** Jobs finished (including those that found nothing durable). */
  processed: number;
  /** Cheap-model calls made; fewer than `processed` when queued jobs were coalesced. */
  calls: number;
  /** Consolidations running right now (at most the concurrency). */
  running: number;
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
  /** Queue a job. False (and counted) when its user's queue is full. Never throws. */
  enqueue(job: WriteBackJob): boolean;
  stats(): ConsolidatorStats;
  /** Resolves once every queued job has finished (for tests and graceful shutdown). */
  drained(): Promise<void>;
}

export interface ConsolidatorOptions {
  llm: LlmClient;
  pager: Pager;
  store: Store;
  /** Jobs per user (default 8). */
  depth?: number;
  /** Consolidations at once, all users (default 2). */
  concurrency?: number;
  /** Per-job limit on the model call (default 60 s). */
  timeoutMs?: number;
  maxTokens?: number;
}

const wbLog = log.child({ component: "writeback" });

export function createConsolidator(opts: ConsolidatorOptions): Consolidator {
  const capacity = opts.depth ?? WRITEBACK_QUEUE_DEPTH;
  const concurrency = Math.max(1, opts.concurrency ?? WRITEBACK_CONCURRENCY);
  /** Waiting jobs per user, oldest first. */
  const waiting = new Map<UserKey, WriteBackJob[]>();
  /** Jobs held per user (waiting + running): what the per-user depth bounds. */
  const held = new Map<UserKey, number>();
  /** Users with waiting jobs, in the order they are served (round robin). */
  const turnOrder: UserKey[] = [];
  /** Users whose batch is running: a user's cortex is written by one batch at a time. */
  const busy = new Set<UserKey>();
  const stats: ConsolidatorStats = {
    depth: 0,
    capacity,
    drops: 0,
    processed: 0,
    calls: 0,
    running: 0,
    failed: 0,
    written: { facts: 0, userFacts: 0, patterns: 0, outcomes: 0, constraints: 0, goals: 0 },
  };
  let idleWaiters: Array<() => void> = [];

  const setDepth = (delta: number) => {
    stats.depth += delta;
    metrics.writebackDepth.set(stats.depth);
  };

  async function runBatch(batch: readonly WriteBackJob[]): Promise<void> {
    const { user, conversation } = batch[0]!;
    if (!opts.store.healthy()) throw new Error("store unavailable; write-back skipped");
    // The open goal on record, so the model can say this turn finished it.
    const { activeGoal } = await opts.pager.pinned(user, batch[0]!.place);
    stats.calls++;
    const completion = await opts.llm.complete({
      role: "cheap",
      system: WRITEBACK_PROMPT,
      messages: [
        {
          role: "user",
          content: renderForWriteback(
            batch.map((j) => j.transcript),
            user,
            activeGoal,
          ),
        },
      ],
      json: true,
      maxTokens: opts.maxTokens ?? 1024,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
      tags: { purpose: "writeback", conversation, user },
    });
    const extract = parseWriteback(completion.content ?? "");
    const counts = await applyWriteback(opts.pager, user, originOf(batch, extract), extract);
    stats.written.facts += counts.facts;
    stats.written.userFacts += counts.userFacts;
    stats.written.patterns += counts.patterns;
    stats.written.outcomes += counts.outcomes;
    stats.written.constraints += counts.constraints;
    stats.written.goals += counts.goals;
    wbLog.debug({ conversation, jobs: batch.length, ...counts }, "write-back applied");
  }

  /** The user's waiting jobs of the conversation waiting longest, taken out of the queue. */
  function takeBatch(user: UserKey): WriteBackJob[] {
    const jobs = waiting.get(user) ?? [];
    const conversation = jobs[0]!.conversation;
    const batch = jobs.filter((j) => j.conversation === conversation);
    const rest = jobs.filter((j) => j.conversation !== conversation);
    if (rest.length > 0) waiting.set(user, rest);
    else waiting.delete(user);
    return batch;
  }

  function pump(): void {
    while (busy.size < concurrency) {
      const i = turnOrder.findIndex((u) => !busy.has(u));
      if (i < 0) break;
      const user = turnOrder.splice(i, 1)[0]!;
      const batch = takeBatch(user);
      if (waiting.has(user)) turnOrder.push(user);
      busy.add(user);
      void runBatch(batch)
        .then(
          () => {
            stats.processed += batch.length;
          },
          (err: unknown) => {
            stats.failed += batch.length;
            wbLog.warn(
              { err: (err as Error).message, conversation: batch[0]!.conversation, jobs: batch.length },
              "write-back failed",
            );
          },
        )
        .finally(() => {
          busy.delete(user);
          const left = (held.get(user) ?? 0) - batch.length;
          if (left > 0) held.set(user, left);
          else held.delete(user);
          setDepth(-batch.length);
          pump();
          if (stats.depth === 0) {
            const waiters = idleWaiters;
            idleWaiters = [];
            for (const w of waiters) w();
          }
        });
    }
  }

  return {
    enqueue(job) {
      const mine = held.get(job.user) ?? 0;
      if (mine >= capacity) {
        stats.drops++;
        metrics.writebackDropped.inc();
        wbLog.warn(
          { conversation: job.conversation, drops: stats.drops },
          "write-back queue of this user full; job dropped",
        );
        return false;
      }
      held.set(job.user, mine + 1);
      const queue = waiting.get(job.user);
      if (queue) queue.push(job);
      else {
        waiting.set(job.user, [job]);
        if (!turnOrder.includes(job.user)) turnOrder.push(job.user);
      }
      setDepth(1);
      pump();
      return true;
    },
    stats: () => ({ ...stats, running: busy.size, written: { ...stats.written } }),
    drained: () => (stats.depth === 0 ? Promise.resolve() : new Promise<void>((r) => idleWaiters.push(r))),
  };
}
