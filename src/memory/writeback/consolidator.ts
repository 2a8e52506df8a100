/**
 * The write-back consolidator: after each completed turn the cheap model reads the transcript and
 * promotes durable learnings into the speaker's cortex. Best effort and bounded, per user as the
 * seed's one-user runtime has it (a channel of `depth` jobs): each user has at most `depth` jobs
 * waiting; beyond that *their* job is dropped and counted, never another user's. The cheap model
 * runs at most `concurrency` write-back calls at once across all users, users served in turn; a
 * user's consolidation takes all their waiting jobs, of every conversation, in one call, each
 * conversation its own section whose records keep that conversation's place. A user is served
 * again while their call runs only once their queue is full (turns that end together, as a
 * platform's rate limit releases them, would overflow it); their cortex is still written by one
 * consolidation at a time, in the order they started. Nothing here ever throws into the loop or
 * delays an answer: a user's consolidation waits for them to pause (no new job for `quietMs`) and
 * for the turns to end (a burst's answers need the CPU first), their jobs coalescing meanwhile; it
 * starts then, once their queue is full, or once their oldest job has waited `maxDeferMs`.
 */

import type { Foreground } from "../../core/foreground.js";
import type { ConversationKey, UserKey } from "../../core/keys.js";
import type { LlmClient } from "../../core/llm/types.js";
import { log } from "../../core/log.js";
import type { WriteBackJob } from "../../core/memory-port.js";
import { metrics } from "../../ops/metrics.js";
import type { Store } from "../../store/types.js";
import type { Pager } from "../cortex/pager.js";
import { type ApplyCounts, applyWriteback, originOf } from "./apply.js";
import { parseWriteback, type WritebackExtract } from "./parse.js";
import { renderForWriteback, WRITEBACK_PROMPT } from "./prompt.js";
import { createWaitingJobs } from "./waiting.js";

/** Seed default queue depth: jobs one user may have waiting. */
export const WRITEBACK_QUEUE_DEPTH = 8;
/** Cheap-model calls running at once for the whole bot when not given: the shipped turn slots (see config.ts). */
export const WRITEBACK_CONCURRENCY = 8;
/** Longest a user's oldest job waits for the turns or the user's pause before their consolidation starts. */
export const WRITEBACK_MAX_DEFER_MS = 2_000;
/**
 * A user's jobs wait until no new job of theirs has come for this long: turns in quick succession
 * are consolidated in one call (bench:system's overhead part: one call per turn was about a third
 * of the CPU Neo spent per message one at a time).
 */
export const WRITEBACK_QUIET_MS = 1_000;
/** Answer tokens per conversation section of a call, and for the whole answer. */
const SECTION_TOKENS = 1024;
const ANSWER_TOKENS = 4096;

export interface ConsolidatorStats {
  /** Jobs held right now (waiting + running), all users. */
  depth: number;
  /** Jobs one user may have waiting. */
  capacity: number;
  /** Jobs dropped because their user's queue was full. */
  drops: number;
  /** Jobs finished (including those that found nothing durable). */
  processed: number;
  /** Cheap-model calls made; fewer than `processed` when waiting jobs were coalesced. */
  calls: number;
  /** Cheap-model calls running right now (at most the concurrency). */
  running: number;
  /** Jobs that failed (model or store error); logged, never thrown. */
  failed: number;
  /** Cheap-model answers not understood at all (logged; their jobs write nothing). */
  unread: number;
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
  /** Starts every waiting job (no pause awaited) and resolves once all have finished (tests, shutdown). */
  drained(): Promise<void>;
}

export interface ConsolidatorOptions {
  llm: LlmClient;
  pager: Pager;
  store: Store;
  /** Jobs waiting per user (default 8). */
  depth?: number;
  /** Cheap-model calls at once, all users (default 8). */
  concurrency?: number;
  /** Per-consolidation limit on the model call (default 60 s). */
  timeoutMs?: number;
  /** Answer tokens per conversation section (default 1024; at most 4096 for a call). */
  maxTokens?: number;
  /** The turns running: consolidation waits for none to run. Without it, it starts at once. */
  foreground?: Foreground;
  /** Longest a job waits for the turns or its user's pause (default `WRITEBACK_MAX_DEFER_MS`). */
  maxDeferMs?: number;
  /** The pause a user's jobs wait for (default `WRITEBACK_QUIET_MS`). */
  quietMs?: number;
}

const wbLog = log.child({ component: "writeback" });

/** A user's jobs split by conversation, each conversation where it first waited, jobs in order. */
function sectionsOf(batch: readonly WriteBackJob[]): WriteBackJob[][] {
  const by = new Map<ConversationKey, WriteBackJob[]>();
  for (const job of batch) {
    const section = by.get(job.conversation);
    if (section) section.push(job);
    else by.set(job.conversation, [job]);
  }
  return [...by.values()];
}

export function createConsolidator(opts: ConsolidatorOptions): Consolidator {
  const capacity = opts.depth ?? WRITEBACK_QUEUE_DEPTH;
  const concurrency = Math.max(1, opts.concurrency ?? WRITEBACK_CONCURRENCY);
  /** Cheap-model calls running per user. */
  const running = new Map<UserKey, number>();
  const waiting = createWaitingJobs({
    capacity,
    maxDeferMs: opts.maxDeferMs ?? WRITEBACK_MAX_DEFER_MS,
    quietMs: opts.quietMs ?? WRITEBACK_QUIET_MS,
    foreground: opts.foreground,
    calling: (user) => running.has(user),
  });
  /** The pump is hooked to the turns' end, and timed for the first job whose wait is up (`wakeAt`). */
  let idleHooked = false;
  let wakeTimer: NodeJS.Timeout | undefined;
  let wakeAt = Number.POSITIVE_INFINITY;
  /** Per user, settled when their latest consolidation has written (or failed): the next writes after it. */
  const written = new Map<UserKey, Promise<void>>();
  let inFlight = 0;
  const stats: ConsolidatorStats = {
    depth: 0,
    capacity,
    drops: 0,
    processed: 0,
    calls: 0,
    running: 0,
    failed: 0,
    unread: 0,
    written: { facts: 0, userFacts: 0, patterns: 0, outcomes: 0, constraints: 0, goals: 0 },
  };
  let idleWaiters: Array<() => void> = [];

  const setDepth = (delta: number) => {
    stats.depth += delta;
    metrics.writebackDepth.set(stats.depth);
  };

  /** The cheap model's extracts for a batch, one per conversation section. */
  async function consult(user: UserKey, sections: readonly WriteBackJob[][]) {
    if (!opts.store.healthy()) throw new Error("store unavailable; write-back skipped");
    // The open goal on record where each conversation runs, so the model can say its turns finished it
    // (as written so far: a consolidation of the user's still running may change it; see apply order).
    const goals = await Promise.all(
      sections.map(async (s) => (await opts.pager.pinned(user, s[0]!.place)).activeGoal),
    );
    stats.calls++;
    const only = sections.length === 1 ? sections[0]![0]!.conversation : undefined;
    const completion = await opts.llm.complete({
      role: "cheap",
      system: WRITEBACK_PROMPT,
      messages: [
        {
          role: "user",
          content: renderForWriteback(
            sections.map((s, i) => ({ snapshots: s.map((j) => j.transcript), openGoal: goals[i]! })),
            user,
          ),
        },
      ],
      json: true,
      maxTokens: Math.min((opts.maxTokens ?? SECTION_TOKENS) * sections.length, ANSWER_TOKENS),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
      // A call for several conversations is the user's spend, not one conversation's.
      tags: { purpose: "writeback", user, ...(only ? { conversation: only } : {}) },
    });
    const { extracts, unread } = parseWriteback(completion.content ?? "", sections.length);
    if (unread) {
      // The answer's words are the user's conversation: only its size is logged.
      stats.unread++;
      metrics.writebackUnread.inc();
      wbLog.warn(
        { user, sections: sections.length, chars: completion.content?.length ?? 0, unread: stats.unread },
        `write-back answer not understood (${unread}); nothing written`,
      );
    }
    return extracts;
  }

  /** Writes a batch's extracts into the user's cortex, section by section, each with its own place. */
  async function apply(user: UserKey, sections: readonly WriteBackJob[][], extracts: WritebackExtract[]) {
    for (const [i, section] of sections.entries()) {
      const extract = extracts[i]!;
      const counts = await applyWriteback(opts.pager, user, originOf(section, extract), extract);
      for (const k of Object.keys(counts) as Array<keyof ApplyCounts>) stats.written[k] += counts[k];
      wbLog.debug(
        { conversation: section[0]!.conversation, jobs: section.length, ...counts },
        "write-back applied",
      );
    }
  }

  /**
   * Consolidates a batch: the model call holds one of the slots; the writes follow those of the
   * user's consolidation that started before (dedupe and goals read what it wrote).
   */
  function start(user: UserKey, batch: readonly WriteBackJob[]): void {
    inFlight++;
    running.set(user, (running.get(user) ?? 0) + 1);
    const before = written.get(user);
    let done!: () => void;
    const mine = new Promise<void>((r) => {
      done = r;
    });
    written.set(user, mine);
    const sections = sectionsOf(batch);
    void consult(user, sections)
      .finally(() => {
        inFlight--;
        const left = running.get(user)! - 1;
        if (left > 0) running.set(user, left);
        else running.delete(user);
        pump();
      })
      .then(async (extracts) => {
        await before;
        await apply(user, sections, extracts);
      })
      .then(
        () => {
          stats.processed += batch.length;
        },
        (err: unknown) => {
          stats.failed += batch.length;
          wbLog.warn({ err: (err as Error).message, jobs: batch.length }, "write-back failed");
        },
      )
      .finally(() => {
        done();
        if (written.get(user) === mine) written.delete(user);
        setDepth(-batch.length);
        if (stats.depth === 0) {
          waiting.flush(false);
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const w of waiters) w();
        }
      });
  }

  /** Waiting users are served when the turns end, and when the first of them is due by the clock. */
  function wakeLater(now: number): void {
    // A full set of calls: the next one's end pumps.
    if (inFlight >= concurrency) return;
    const at = waiting.nextDue();
    if (at === undefined) return;
    if (!idleHooked && opts.foreground && opts.foreground.running > 0) {
      idleHooked = true;
      opts.foreground.whenIdle(() => {
        idleHooked = false;
        pump();
      });
    }
    if (at >= wakeAt) return;
    clearTimeout(wakeTimer);
    wakeAt = at;
    wakeTimer = setTimeout(
      () => {
        wakeAt = Number.POSITIVE_INFINITY;
        pump();
      },
      Math.max(0, at - now),
    );
    // Shutdown does not wait for it: it flushes (`drained`).
    wakeTimer.unref();
  }

  function pump(): void {
    const now = Date.now();
    while (inFlight < concurrency) {
      const next = waiting.take(now);
      if (!next) break;
      start(next.user, next.batch);
    }
    wakeLater(now);
  }

  return {
    enqueue(job) {
      if (!waiting.add(job, Date.now())) {
        stats.drops++;
        metrics.writebackDropped.inc();
        wbLog.warn(
          { conversation: job.conversation, drops: stats.drops },
          "write-back queue of this user full; job dropped",
        );
        return false;
      }
      setDepth(1);
      pump();
      return true;
    },
    stats: () => ({ ...stats, running: inFlight, written: { ...stats.written } }),
    drained() {
      if (stats.depth === 0) return Promise.resolve();
      // Nothing waits for a pause any more: everything held starts, as the calls allow.
      waiting.flush(true);
      pump();
      return new Promise<void>((r) => idleWaiters.push(r));
    },
  };
}
