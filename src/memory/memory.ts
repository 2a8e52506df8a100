/**
 * The memory side wired together: the MemoryPort the loop uses (fault → rendered sections for the
 * speaker only; writeBack → record the turn and enqueue consolidation), the `memory_recall` tool
 * delegate, and the consolidator's stats for status and metrics.
 */

import type { MemoryItem } from "../core/commands/memory-view.js";
import type { Foreground } from "../core/foreground.js";
import { cortexOwner, type UserKey } from "../core/keys.js";
import type { LlmClient } from "../core/llm/types.js";
import { log } from "../core/log.js";
import {
  EMPTY_PAGE,
  type FaultRequest,
  type MemoryPage,
  type MemoryPort,
  type WriteBackJob,
} from "../core/memory-port.js";
import { learnedIn, type Place, visibleIn } from "../core/place.js";
import type { ToolCallContext, ToolResult } from "../core/tools/types.js";
import { type Store, StoreUnavailableError } from "../store/types.js";
import { createPager, type Pager } from "./cortex/pager.js";
import { DEFAULT_RECALL_TURNS, recordLine } from "./cortex/ranking.js";
import {
  renderPattern,
  renderPatterns,
  renderPinned,
  renderRecalled,
  renderRetrieved,
} from "./cortex/render.js";
import { exportUserData, memoryItem } from "./export.js";
import { type ConsolidatorStats, createConsolidator } from "./writeback/consolidator.js";
import { lastExchange } from "./writeback/prompt.js";

export interface MemoryOptions {
  store: Store;
  /** The two-model client; write-back uses the cheap role. */
  llm: LlmClient;
  /** Token budget of the retrieved-records section (default 1200). */
  retrievedTokens?: number;
  /** Token budget of the recalled-turns section (default 1500). */
  recalledTokens?: number;
  /** Recalled turns at most (default 16, `NEO_RECALL_TURNS`). */
  recallTurns?: number;
  /** Patterns shown at most (default 3). */
  maxPatterns?: number;
  /** Write-back jobs each user may have waiting (default 8). */
  writebackDepth?: number;
  /** Write-back calls at once, all users (default 8). */
  writebackConcurrency?: number;
  writebackTimeoutMs?: number;
  /** `NEO_MEMORY_RETENTION_DAYS` in ms; unset = kept until forgotten (pager.ts). */
  retentionMs?: number;
  /** The turns running: write-back gives way to them (see the consolidator). */
  foreground?: Foreground;
  /** Longest a write-back job waits for the turns or its user's pause (default 2 s). */
  writebackMaxDeferMs?: number;
  /** The pause of a user's turns their write-back jobs wait for (default 1 s). */
  writebackQuietMs?: number;
}

export interface Memory {
  /** What the loop calls. */
  port: MemoryPort;
  /** Read `user`'s view now, for the page their turn is about to fault (`UserViews.warm`). */
  warm(user: UserKey): void;
  /** The `memory_recall` tool: a digest of the calling speaker's records and profile. */
  /** Only records visible where the calling turn runs (`ctx.place`) are searched. */
  memoryRecall(query: string, ctx: Pick<ToolCallContext, "speaker" | "place">): Promise<ToolResult>;
  /** `/neo memory`: every record Neo keeps about `user`, wherever learned, newest first. */
  list(user: UserKey): Promise<MemoryItem[]>;
  /** A `/neo memory` button: forget one record (and the exchanges it came from); false when unknown. */
  forgetOne(user: UserKey, id: string): Promise<boolean>;
  /** A `/neo memory` button: show one record everywhere, or only where learned; false when unknown. */
  setEverywhere(user: UserKey, id: string, everywhere: boolean): Promise<boolean>;
  /** `/neo memory export`: everything held about `user` (`export.ts`). */
  export(user: UserKey): Promise<Awaited<ReturnType<typeof exportUserData>>>;
  /** `/neo forget`: wipe `user`'s cortex; resolves with how many records and turns were removed. */
  forget(user: UserKey): Promise<number>;
  /** Direct cortex access (export, goals, constraints). */
  pager: Pager;
  /** Write-back queue depth, drops, and counts (status, metrics). */
  stats(): ConsolidatorStats & { unavailable: boolean };
  /** Resolves when every pending turn record and write-back job has finished. */
  drained(): Promise<void>;
}

const memLog = log.child({ component: "memory" });

export function createMemory(opts: MemoryOptions): Memory {
  const { store } = opts;
  const pager = createPager({
    store,
    ...(opts.retentionMs === undefined ? {} : { retentionMs: opts.retentionMs }),
  });
  const consolidator = createConsolidator({
    llm: opts.llm,
    pager,
    store,
    depth: opts.writebackDepth,
    concurrency: opts.writebackConcurrency,
    timeoutMs: opts.writebackTimeoutMs,
    foreground: opts.foreground,
    maxDeferMs: opts.writebackMaxDeferMs,
    quietMs: opts.writebackQuietMs,
  });
  const pendingTurns = new Set<Promise<unknown>>();
  let unavailable = false;

  /** Log the outage once, and the recovery once. */
  const markDown = (err?: unknown) => {
    if (!unavailable)
      memLog.warn(
        { err: (err as Error | undefined)?.message },
        "memory unavailable: the store cannot be reached",
      );
    unavailable = true;
  };
  const markUp = () => {
    if (unavailable) memLog.info("memory available again");
    unavailable = false;
  };

  async function fault(at: FaultRequest): Promise<MemoryPage> {
    const req = { ...at, user: cortexOwner(at.user) };
    if (!store.healthy()) {
      markDown();
      return { ...EMPTY_PAGE, unavailable: true };
    }
    try {
      const goal = req.activeGoal || req.query;
      const [pinned, patterns, retrieved, recalled] = await Promise.all([
        // The loop pins the turn's own active goal itself; only a stored open goal is added here.
        pager.pinned(req.user, req.place),
        pager.faultPatterns(req.user, req.place, goal, opts.maxPatterns ?? 3),
        pager.fault(req.user, req.place, req.query, opts.retrievedTokens ?? 1200),
        pager.recallTurns(req.user, req.place, req.query, {
          live: req.live,
          max: opts.recallTurns ?? DEFAULT_RECALL_TURNS,
          tokenBudget: opts.recalledTokens ?? 1500,
        }),
      ]);
      markUp();
      const shownPatterns = new Set(patterns.map((p) => p.record.id));
      return {
        pinned: renderPinned(pinned),
        recalled: renderRecalled(recalled),
        retrieved: renderRetrieved(retrieved.filter((r) => !shownPatterns.has(r.record.id))),
        patterns: renderPatterns(patterns),
      };
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      markDown(err);
      return { ...EMPTY_PAGE, unavailable: true };
    }
  }

  function writeBack(at: WriteBackJob): void {
    // What a turn in a guessed place teaches is kept as learned in a private one (`learnedIn`).
    const job = { ...at, user: cortexOwner(at.user), place: learnedIn(at.place) };
    const exchange = lastExchange(job.transcript, job.user);
    if (exchange) {
      const p = pager
        .recordTurn(job.user, { conversation: job.conversation, ...exchange, learned: job.place })
        .catch((err: unknown) =>
          memLog.warn({ err: (err as Error).message }, "could not record the turn for recall"),
        )
        .finally(() => pendingTurns.delete(p));
      pendingTurns.add(p);
    }
    consolidator.enqueue(job);
  }

  async function digest(user: UserKey, here: Place, query: string): Promise<string> {
    const [pinned, records, patterns, turns] = await Promise.all([
      pager.pinned(user, here),
      query.trim() ? pager.fault(user, here, query, 2000) : recent(user, here),
      pager.faultPatterns(user, here, query, 5),
      pager.recallTurns(user, here, query, { max: 5, tokenBudget: 1200 }),
    ]);
    const parts: string[] = [];
    const pinnedText = renderPinned(pinned);
    if (pinnedText) parts.push(pinnedText);
    const shown = new Set(patterns.map((p) => p.record.id));
    const rest = records.filter((r) => !shown.has(r.record.id));
    if (rest.length)
      parts.push(
        `Remembered${query.trim() ? ` for "${query.trim()}"` : ""}:\n${rest.map((r) => `- ${recordLine(r.record)}`).join("\n")}`,
      );
    if (patterns.length)
      parts.push(`Procedures:\n${patterns.map((p) => renderPattern(p.record)).join("\n")}`);
    if (turns.length) parts.push(renderRecalled(turns));
    return parts.join("\n\n");
  }

  /** Without a query: the newest records, so the digest is never empty when memory is not. */
  async function recent(user: UserKey, here: Place) {
    const all = await pager.records(user);
    return all
      .filter((r) => r.kind !== "user_fact" && r.kind !== "constraint" && visibleIn(r.learned, here))
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .slice(0, 20)
      .map((record) => ({ record, score: 0 }));
  }

  return {
    port: { fault, writeBack },
    warm(user) {
      if (store.healthy()) pager.warm(cortexOwner(user));
    },
    pager,
    async memoryRecall(query, ctx) {
      if (!store.healthy()) {
        markDown();
        return {
          content: "Memory is unavailable right now (the store cannot be reached). Try again later.",
          isError: true,
        };
      }
      try {
        const text = await digest(cortexOwner(ctx.speaker.userKey), ctx.place, query);
        return { content: text || "Nothing is remembered about this user yet.", isError: false };
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        markDown(err);
        return {
          content: "Memory is unavailable right now (the store cannot be reached). Try again later.",
          isError: true,
        };
      }
    },
    async list(user) {
      const all = await pager.records(cortexOwner(user));
      return all.sort((a, b) => b.updatedAt - a.updatedAt).map(memoryItem);
    },
    async forgetOne(user, id) {
      const gone = await pager.forgetRecord(cortexOwner(user), id);
      // Erased from the store's files too, not only from its keys (the file store's log).
      if (gone) await store.purge();
      return gone;
    },
    setEverywhere: async (user, id, everywhere) =>
      (await pager.setEverywhere(cortexOwner(user), id, everywhere)) !== undefined,
    export: (user) => exportUserData(store, pager, user),
    async forget(user) {
      const n = await pager.forgetUser(cortexOwner(user));
      // Erased from the store's files too, not only from its keys (the file store's log).
      await store.purge();
      return n;
    },
    stats: () => ({ ...consolidator.stats(), unavailable }),
    async drained() {
      while (pendingTurns.size > 0) await Promise.all([...pendingTurns]);
      await consolidator.drained();
    },
  };
}
