/**
 * The conversations layer: journals every inbound message before anything else, runs one worker
 * per conversation (serialised per thread by a store lease, parallel across threads up to the slot
 * limit), evicts idle agents from memory, sweeps the store for work nobody holds, and shuts down by
 * cutting running turns at their next cancellation point so the next start resumes them.
 */
import { type ConversationKey, parseConversationKey, type UserKey } from "../keys.js";
import { log } from "../log.js";
import type { Place } from "../place.js";
import { parseInbound } from "./inbound.js";
import { createJournal, LOCK_PREFIX } from "./journal.js";
import { createLeases } from "./lease.js";
import type { LogEntry } from "./log-entry.js";
import { recordSubmitted } from "./observe.js";
import { resetSummary } from "./replay.js";
import { createSlots, type SlotGrant, SlotsClosedError } from "./slots.js";
import { createSpeakers } from "./speakers.js";
import { drain, turnContext } from "./thread.js";
import type { AbortReason, Control, Thread, ThreadEnv } from "./thread-state.js";
import type {
  ConversationIO,
  ConversationsOptions,
  ConversationsService,
  InboundMessage,
  SubmitResult,
} from "./types.js";

/** Another instance holds the conversation for longer than a control (reset, compact) may wait. */
export class ConversationBusyError extends Error {
  readonly code = "CONVERSATION_BUSY";
}

/** How many lease attempts a control makes (a third of a lease apart) before giving up. */
const CONTROL_ATTEMPTS = 9;

export function createConversations(options: ConversationsOptions): ConversationsService {
  const { store, limits, instanceId } = options;
  const journal = createJournal(store, limits.dedupeTtlMs);
  const speakers = createSpeakers(store);
  const leases = createLeases(store, instanceId, limits.leaseMs);
  const slots = createSlots({ size: limits.maxConcurrentTurns, bucket: limits.userTurns });
  const threads = new Map<ConversationKey, Thread>();
  /** Threads whose work failed (the store went away): the sweep runs them again, marker or not. */
  const retry = new Set<ConversationKey>();
  let closing = false;
  let sweepTimer: NodeJS.Timeout | null = null;
  let sweeping = false;
  const env: ThreadEnv = { journal, options, closing: () => closing };

  const thread = (key: ConversationKey): Thread => {
    let t = threads.get(key);
    if (!t) {
      t = {
        key,
        live: null,
        working: null,
        again: false,
        turn: null,
        ios: new Map(),
        controls: [],
        idleTimer: null,
        delivered: null,
        slot: null,
        lastSpeaker: null,
        unfetched: new Map(),
        interrupted: null,
      };
      threads.set(key, t);
    }
    if (t.idleTimer) clearTimeout(t.idleTimer);
    t.idleTimer = null;
    return t;
  };

  const defaultIo = (t: Thread): ConversationIO => t.ios.values().next().value ?? options.io(t.key);

  const tellQueued = (t: Thread, position: number): void => {
    const ahead = position === 1 ? "1 conversation is" : `${position} conversations are`;
    defaultIo(t)
      .reporter.status(`Queued: ${ahead} ahead of this one. I'll start as soon as a slot frees up.`)
      .catch((err: unknown) => log.warn({ err, conversation: t.key }, "queued status failed"));
  };

  /** Told once per burst, in the thread of its first held-back turn: nothing is dropped. */
  const tellThrottled = (t: Thread, user: UserKey, waitMs: number): void => {
    log.info({ conversation: t.key, waitMs }, "turns held back: the user is over their turn rate");
    const every = Math.max(1, Math.round(60 / limits.userTurns.perMinute));
    defaultIo(t)
      .reporter.notice(
        "You've sent me a lot at once, so I'm taking it a little slower: I'll answer every message, " +
          `in order, about one every ${every} s (next in about ${Math.max(1, Math.ceil(waitMs / 1000))} s). ` +
          "Nothing is lost.",
      )
      .catch((err: unknown) => log.warn({ err, conversation: t.key, user }, "throttle notice failed"));
  };

  /**
   * Whose turn the thread's next pass runs: the first pending message's author when the thread has
   * read its inbox, else the author of the last message submitted here, else (work found by the
   * sweep) the conversation itself stands in.
   */
  const nextRequester = (t: Thread): UserKey => t.live?.pending[0]?.speaker.userKey ?? t.lastSpeaker ?? t.key;

  /**
   * One pass: slot, lease, drain, release. "again" = more work may have arrived; "held" = another
   * instance holds the lease (it re-checks the inbox after releasing, so no message is lost).
   */
  const pass = async (t: Thread): Promise<"again" | "held" | "done"> => {
    let slot: SlotGrant;
    const user = nextRequester(t);
    try {
      slot = await slots.acquire({
        user,
        onQueued: (position) => tellQueued(t, position),
        onThrottled: (waitMs) => tellThrottled(t, user, waitMs),
      });
    } catch (err) {
      if (err instanceof SlotsClosedError) return "done";
      throw err;
    }
    let taken: number;
    const ended = options.turns?.begin();
    try {
      // The lease and the conversation's state in one round trip (Redis runs them in this order:
      // the state is read under the lease, after any journal write sent before it).
      const [leased, read] = await Promise.allSettled([
        leases.tryAcquire(journal.lockKey(t.key)),
        journal.snapshot(t.key, t.live && !t.live.stale ? t.live.fetched : undefined),
      ]);
      if (leased.status === "rejected") throw leased.reason;
      const lease = leased.value;
      if (!lease) return "held";
      if (read.status === "rejected") {
        await lease.release();
        throw read.reason;
      }
      const snap = read.value;
      t.slot = slot;
      try {
        taken = await drain(t, lease, env, snap);
      } finally {
        t.slot = null;
        await lease.release();
      }
    } finally {
      slot.release();
      ended?.();
    }
    if (closing) return "done";
    // Re-check after releasing: a message journaled while we held the lease, whose submitter
    // failed to get it, is ours to run. `again` is read after the length: a message submitted while
    // it is read may be journaled after the read, and then only `again` tells of it.
    const length = await journal.inboxLength(t.key);
    const more = t.again || t.controls.length > 0 || length > taken;
    return more ? "again" : "done";
  };

  const work = async (t: Thread): Promise<void> => {
    let controlAttempts = 0;
    for (;;) {
      t.again = false;
      let outcome: Awaited<ReturnType<typeof pass>>;
      try {
        outcome = await pass(t);
      } catch (err) {
        // Store or log trouble: our view may be ahead of the log (`restore` decides which is right).
        // The sweep runs it again, even if the store came back without its "has work" marker.
        log.error({ err, conversation: t.key }, "conversation work failed");
        if (t.live) t.live.stale = true;
        retry.add(t.key);
        failControls(t, err);
        return;
      }
      retry.delete(t.key);
      if (closing || outcome === "done") return;
      if (outcome === "held") {
        // Only a control (reset, compact) waits for the holder, outside any slot, for a bounded time.
        if (t.controls.length === 0) return;
        if (++controlAttempts >= CONTROL_ATTEMPTS) {
          failControls(
            t,
            new ConversationBusyError("another instance is running this conversation; try again shortly"),
          );
          return;
        }
        await new Promise((r) => setTimeout(r, Math.max(50, limits.leaseMs / 3)));
      }
    }
  };

  const failControls = (t: Thread, err: unknown): void => {
    for (const c of t.controls.splice(0)) c.done(err);
  };

  const schedule = (t: Thread): void => {
    if (t.working) {
      t.again = true;
      return;
    }
    t.working = work(t).finally(() => {
      t.working = null;
      if (closing) return;
      // Work asked for after this work's last look (its `again` unread): run it now, not at the sweep.
      if (t.again) schedule(t);
      else armEviction(t);
    });
  };

  const armEviction = (t: Thread): void => {
    if (t.idleTimer) clearTimeout(t.idleTimer);
    t.idleTimer = setTimeout(() => {
      if (t.working || t.controls.length > 0 || retry.has(t.key)) return;
      // IO overrides of messages another instance ran are dropped with the thread.
      threads.delete(t.key);
    }, limits.idleEvictMs);
    t.idleTimer.unref();
  };

  /** `running`: a turn was running here when the message came (it reads it at its next step). */
  const acknowledge = async (
    t: Thread,
    message: InboundMessage,
    io: ConversationIO,
    running: boolean,
  ): Promise<void> => {
    if (!running) {
      // Not running here: say it was taken only if another instance is running this thread now.
      const holder = await store.get<string>(journal.lockKey(t.key));
      if (holder === undefined || holder.startsWith(`${instanceId}#`)) return;
    }
    if (io.acknowledgeQueued) await io.acknowledgeQueued(message);
    else await io.reporter.status("Got it. I'll read this at my next step.");
  };

  const control = (key: ConversationKey, run: Control["run"]): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const t = thread(key);
      t.controls.push({ run, done: (err) => (err === undefined ? resolve() : reject(err)) });
      schedule(t);
    });

  const sweep = async (): Promise<void> => {
    if (sweeping || closing) return;
    sweeping = true;
    try {
      if (store.healthy()) {
        for (const key of retry) {
          const t = thread(key);
          if (!t.working) schedule(t);
        }
      }
      for (const key of await journal.withPending()) {
        const t = thread(key);
        if (!t.working) schedule(t);
      }
    } catch (err) {
      log.warn({ err }, "conversation sweep failed; next sweep retries");
    } finally {
      sweeping = false;
    }
  };

  const abortTurn = (key: ConversationKey, reason: AbortReason): boolean => {
    const turn = threads.get(key)?.turn;
    if (!turn) return false;
    turn.abort(reason);
    return true;
  };

  return {
    async start() {
      const cleared = await leases.clearOwnStale(LOCK_PREFIX);
      if (cleared > 0) log.info({ cleared, instanceId }, "freed leases left by this instance's previous run");
      await sweep();
      sweepTimer = setInterval(() => void sweep(), limits.sweepMs);
      sweepTimer.unref();
    },

    async submit(raw, io) {
      if (closing) return { accepted: false, reason: "shutting_down" } satisfies SubmitResult;
      const message = parseInbound(raw);
      const t = thread(message.conversation);
      // Held before it is journaled, so a read of the inbox that sees it always finds it here to drop.
      const mine = !t.unfetched.has(message.id);
      if (mine) t.unfetched.set(message.id, message);
      const ownIo = io !== undefined && !t.ios.has(message.id);
      if (ownIo) t.ios.set(message.id, io);
      t.lastSpeaker = message.speaker.userKey;
      // Before this message's own pass can start its turn.
      const running = t.turn !== null;
      // One round trip: the journal, who spoke (for /neo reset; it must not cost the message its
      // turn), and the pass's lease and read of the conversation, which Redis runs after the journal
      // write. A pass for a message that turns out a duplicate finds nothing new to do.
      const recorded = journal.record(message);
      const spoke = speakers
        .record(message.conversation, message.speaker.userKey)
        .catch((err: unknown) => log.warn({ err, conversation: t.key }, "could not note the speaker"));
      schedule(t);
      let fresh = false;
      try {
        fresh = await recorded;
      } finally {
        if (!fresh && mine) t.unfetched.delete(message.id);
        if (!fresh && ownIo) t.ios.delete(message.id);
      }
      await spoke;
      recordSubmitted(message, fresh);
      if (!fresh) return { accepted: false, reason: "duplicate" };
      acknowledge(t, message, io ?? options.io(t.key), running).catch((err: unknown) =>
        log.warn({ err, conversation: t.key }, "queued acknowledgement failed"),
      );
      return { accepted: true };
    },

    spokeIn: (key, user) => speakers.spokeIn(key, user),

    threadReach: (key) => journal.threadReach(key),

    async reset(key) {
      abortTurn(key, "reset");
      await control(key, async (live, e, t) => {
        // A trim that drops the whole window: the next request starts a new, announced window.
        const { working, summary } = live.agent.state();
        const entry: LogEntry = {
          type: "trim",
          drop: working.length,
          summary: resetSummary(summary),
          at: Date.now(),
        };
        live.logLength = await e.journal.appendLog(t.key, [entry], live.logLength);
        live.agent = e.options.newAgent({ working: [], summary: entry.summary });
      });
    },

    async compact(key) {
      await control(key, async (live, e, t) => {
        const signal = new AbortController().signal;
        // Compaction reads no memory; the narrowest place is given all the same.
        const place: Place = { kind: "public", workspace: parseConversationKey(t.key).workspace };
        await live.agent.compact("manual", turnContext(t, live, e, e.options.io(t.key), true, place, signal));
      });
    },

    async cancel(key) {
      return abortTurn(key, "cancel");
    },

    stats() {
      let running = 0;
      let queued = 0;
      for (const t of threads.values()) {
        if (t.turn) running++;
        queued += t.live?.pending.length ?? 0;
      }
      return {
        active: threads.size,
        running,
        queued,
        waitingForSlot: slots.waiting,
        throttledUsers: slots.throttled,
      };
    },

    async shutdown(graceMs) {
      closing = true;
      if (sweepTimer) clearInterval(sweepTimer);
      slots.close();
      for (const t of threads.values()) {
        t.turn?.abort("shutdown" satisfies AbortReason);
        if (t.idleTimer) clearTimeout(t.idleTimer);
      }
      const working = [...threads.values()].flatMap((t) => (t.working ? [t.working] : []));
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((r) => {
        timer = setTimeout(r, graceMs);
      });
      await Promise.race([Promise.allSettled(working), grace]);
      clearTimeout(timer);
      for (const t of threads.values()) failControls(t, new ConversationBusyError("shutting down"));
    },
  };
}
