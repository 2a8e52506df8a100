/**
 * One worker per conversation: the threads held in memory, a pass (slot, lease, drain, release)
 * repeated while work keeps arriving, controls queued to run under the lease, and eviction of
 * threads left idle. Serialised per thread by the store lease, parallel across threads up to the
 * slot limit.
 */
import type { ConversationKey, UserKey } from "../keys.js";
import { log } from "../log.js";
import { createBacklog } from "./backlog.js";
import { ConversationBusyError, failControls } from "./controls.js";
import type { Journal } from "./journal.js";
import type { Lease, Leases } from "./lease.js";
import { tellQueued, tellThrottled } from "./notices.js";
import { type SlotGrant, type Slots, SlotsClosedError } from "./slots.js";
import { type Drained, drain } from "./thread.js";
import type { AbortReason, Control, Thread, ThreadEnv } from "./thread-state.js";
import { giveBackUnspent, type TurnTokens } from "./turn-tokens.js";
import type { ConversationsOptions } from "./types.js";

/** How long a slot may take to be granted and the state read beside the lease still be used. */
const FRESH_READ_MS = 100;

/** Give back a lease taken for a turn that will not run (shutting down, the slot refused). */
async function dropLease(
  leasing: Promise<readonly [PromiseSettledResult<Lease | null>, ...unknown[]]>,
): Promise<void> {
  const [leased] = await leasing;
  if (leased.status === "fulfilled") await leased.value?.release();
}

/** The value of a settled read, or its error thrown. */
function settled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === "rejected") throw r.reason;
  return r.value;
}

/** How many lease attempts a control makes (a third of a lease apart) before giving up. */
const CONTROL_ATTEMPTS = 9;

export interface Workers {
  readonly threads: Map<ConversationKey, Thread>;
  /** Threads whose work failed (the store went away): the sweep runs them again, marker or not. */
  readonly retry: ReadonlySet<ConversationKey>;
  closing(): boolean;
  /** Shutting down: passes stop after their current drain, and nothing new is scheduled. */
  close(): void;
  /** The thread for `key`, made if absent; its idle eviction is called off. */
  thread(key: ConversationKey): Thread;
  /** Start the thread's worker, or tell the running one to look again before it stops. */
  schedule(t: Thread): void;
  /**
   * Whether `user`'s new message in `t` may be scheduled now: false when the user already has
   * `WAITING_PER_USER` threads waiting for a slot here; the thread is then queued by key, to be
   * scheduled when one of them starts, and its message is left to the store (`park`).
   */
  admit(t: Thread, user: UserKey): boolean;
  /** Drop what memory holds of message `id` of a thread `admit` refused (journaled, so safe). */
  park(t: Thread, id: string): void;
  /** Threads queued by `admit` (the sweep leaves them to it). */
  readonly parked: ReadonlySet<ConversationKey>;
  /** Run `run` under the conversation's lease, between turns. */
  control(key: ConversationKey, run: Control["run"]): Promise<void>;
  /** Abort the running turn, if any; true if there was one. */
  abortTurn(key: ConversationKey, reason: AbortReason): boolean;
}

export function createWorkers(
  options: ConversationsOptions,
  journal: Journal,
  leases: Leases,
  slots: Slots,
  tokens: TurnTokens,
): Workers {
  const { limits } = options;
  const threads = new Map<ConversationKey, Thread>();
  const retry = new Set<ConversationKey>();
  const backlog = createBacklog();
  let closing = false;
  const env: ThreadEnv = { journal, tokens, options, closing: () => closing };

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
        leaseAttempt: null,
        slot: null,
        parkedFor: null,
        token: null,
        unfetched: new Map(),
        interrupted: null,
      };
      threads.set(key, t);
    }
    if (t.idleTimer) clearTimeout(t.idleTimer);
    t.idleTimer = null;
    return t;
  };

  /**
   * Whose turn the thread's next pass likely runs: the first pending message's author when the
   * thread has read its inbox, else the author of the oldest message submitted here and not read
   * back yet, else the user a parked thread was queued under, else (work found by the sweep) nobody
   * known: the turn charges its requester once the inbox is read (turn-tokens.ts).
   */
  const nextRequester = (t: Thread): UserKey | null => {
    const known = t.live?.pending[0] ?? t.unfetched.values().next().value;
    const parkedFor = t.parkedFor;
    t.parkedFor = null;
    return known?.speaker.userKey ?? parkedFor;
  };

  /**
   * One pass: slot, lease, drain, release. "again" = more work may have arrived; "held" = another
   * instance holds the lease (it re-checks the inbox after releasing, so no message is lost).
   */
  const pass = async (t: Thread): Promise<"again" | "held" | "done"> => {
    let slot: SlotGrant;
    const requester = nextRequester(t);
    // An unknown requester's place in the fair order is kept by the conversation's key.
    const user = requester ?? t.key;
    const readState = () => journal.snapshot(t.key, t.live && !t.live.stale ? t.live.fetched : undefined);
    // The lease and the conversation's state in one round trip (Redis runs them in this order: the
    // state is read under the lease, after any journal write sent before it), sent before the slot
    // is asked for: when one is free, they go out with the user's token take (the fleet-wide rate
    // costs the answer no round trip of its own).
    const leasing = Promise.allSettled([leases.tryAcquire(journal.lockKey(t.key)), readState()]);
    t.leaseAttempt = leasing.then(([l]) => (l.status === "fulfilled" ? l.value !== null : undefined));
    const opens = slots.opensNow(user);
    // The turn starts now: what it reads about its requester goes out in the same round trip.
    if (opens && requester) options.warm?.(requester);
    // Counted from now: `admit` bounds what one user has waiting here.
    backlog.waiting(user);
    const asked = Date.now();
    try {
      if (!opens) {
        // The turn will wait (no free slot, or its user is over their rate): it waits holding the
        // conversation, so another instance's sweep leaves the turn to it rather than wait for the
        // same token too; held elsewhere, the holder takes the message up when it lets go.
        const [leased] = await leasing;
        if (leased.status === "rejected") throw leased.reason;
        if (!leased.value) return "held";
      }
      slot = await slots.acquire({
        user,
        charge: requester !== null,
        onQueued: (position) => tellQueued(options, t, position),
        onThrottled: (waitMs) => tellThrottled(options, t, user, waitMs),
      });
    } catch (err) {
      await dropLease(leasing);
      if (err instanceof SlotsClosedError) return "done";
      throw err;
    } finally {
      stopWaiting(user);
    }
    let drained: Drained;
    let length: number;
    t.token = requester;
    const ended = options.turns?.begin();
    try {
      const [leased, state] = await leasing;
      if (leased.status === "rejected") throw leased.reason;
      const lease = leased.value;
      if (!lease) return "held";
      t.slot = slot;
      try {
        // Read before a wait for the slot: read again, messages may have come meanwhile.
        const snap = Date.now() - asked > FRESH_READ_MS ? await readState() : settled(state);
        drained = await drain(t, lease, env, snap);
      } catch (err) {
        t.slot = null;
        await lease.release();
        throw err;
      }
      t.slot = null;
      // Re-check after releasing: a message journaled while we held the lease, whose submitter
      // failed to get it, is ours to run. The release and the read are one command (the read after):
      // the last turn's end, when it let go (nothing else had come), else this one.
      length = drained.letGo ?? (await lease.releaseThenLength(journal.inboxKey(t.key)));
    } finally {
      giveBackUnspent(t, tokens);
      slot.release();
      ended?.();
    }
    if (closing) return "done";
    // `again` is read after the length: a message submitted while it is read may be journaled after
    // the read, and then only `again` tells of it.
    const more = t.again || t.controls.length > 0 || length > drained.taken;
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

  /** One of `user`'s threads stopped waiting for a slot: the next parked ones take its place. */
  const stopWaiting = (user: UserKey): void => {
    const letIn = backlog.stopped(user);
    if (closing) return;
    for (const key of letIn) {
      const t = thread(key);
      // Rebuilt from the store: its pass queues under the user who asked, not under the thread.
      t.parkedFor = user;
      schedule(t);
    }
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

  const admit = (t: Thread, user: UserKey): boolean => backlog.admit(t.key, user, t.working !== null);

  const park = (t: Thread, id: string): void => {
    t.ios.delete(id);
    t.unfetched.delete(id);
    const idle = !t.working && !t.live && t.controls.length === 0 && t.ios.size === 0;
    if (idle && t.unfetched.size === 0 && !retry.has(t.key)) {
      if (t.idleTimer) clearTimeout(t.idleTimer);
      threads.delete(t.key);
    }
  };

  const armEviction = (t: Thread): void => {
    if (t.idleTimer) clearTimeout(t.idleTimer);
    t.idleTimer = setTimeout(
      () => {
        if (t.working || t.controls.length > 0 || retry.has(t.key)) return;
        // IO overrides of messages another instance ran are dropped with the thread.
        threads.delete(t.key);
      },
      Math.min(limits.idleEvictMs, limits.retentionMs),
    );
    t.idleTimer.unref();
  };

  const control = (key: ConversationKey, run: Control["run"]): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const t = thread(key);
      t.controls.push({ run, done: (err) => (err === undefined ? resolve() : reject(err)) });
      schedule(t);
    });

  const abortTurn = (key: ConversationKey, reason: AbortReason): boolean => {
    const turn = threads.get(key)?.turn;
    if (!turn) return false;
    turn.abort(reason);
    return true;
  };

  return {
    threads,
    retry,
    closing: () => closing,
    close() {
      closing = true;
    },
    thread,
    schedule,
    admit,
    park,
    parked: backlog.parked,
    control,
    abortTurn,
  };
}
