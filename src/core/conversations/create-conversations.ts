/**
 * The conversations layer: journals every inbound message before anything else, runs one worker
 * per conversation (serialised per thread by a store lease, parallel across threads up to the slot
 * limit), evicts idle agents from memory, sweeps the store for work nobody holds, and shuts down by
 * cutting running turns at their next cancellation point so the next start resumes them.
 * This file wires the pieces and takes messages in; the workers, the sweep, the controls and the
 * notices are their own files.
 */
import { log } from "../log.js";
import { ConversationBusyError, compactWindow, failControls, resetWindow } from "./controls.js";
import { eraseFrom } from "./erase.js";
import { parseInbound } from "./inbound.js";
import { createJournal } from "./journal.js";
import { createLeases } from "./lease.js";
import { acknowledge } from "./notices.js";
import { recordSubmitted } from "./observe.js";
import { createSlots } from "./slots.js";
import { createSpeakers } from "./speakers.js";
import { createSweep } from "./sweep.js";
import type { AbortReason } from "./thread-state.js";
import { createTurnTokens } from "./turn-tokens.js";
import type { ConversationsOptions, ConversationsService, SubmitResult } from "./types.js";
import { createWorkers } from "./workers.js";

export function createConversations(options: ConversationsOptions): ConversationsService {
  const { store, limits, instanceId } = options;
  const journal = createJournal(store, limits.dedupeTtlMs, limits.retentionMs);
  const speakers = createSpeakers(store, limits.retentionMs);
  const leases = createLeases(store, instanceId, limits.leaseMs);
  const tokens = createTurnTokens(store, limits);
  const slots = createSlots({ size: limits.maxConcurrentTurns, takeToken: tokens.take });
  const workers = createWorkers(options, journal, leases, slots, tokens);
  const sweep = createSweep(options, journal, leases, workers);
  const { threads, thread, schedule, control, abortTurn } = workers;

  return {
    start: () => sweep.start(),

    async submit(raw, io) {
      if (workers.closing()) return { accepted: false, reason: "shutting_down" } satisfies SubmitResult;
      const message = parseInbound(raw);
      const t = thread(message.conversation);
      // Held before it is journaled, so a read of the inbox that sees it always finds it here to drop.
      const mine = !t.unfetched.has(message.id);
      if (mine) t.unfetched.set(message.id, message);
      const ownIo = io !== undefined && !t.ios.has(message.id);
      if (ownIo) t.ios.set(message.id, io);
      // Before this message's own pass can start its turn.
      const running = t.turn !== null;
      // One round trip: the journal with who spoke (for /neo reset and erasures: written in the
      // journal's step unless this instance wrote it before), and the pass's lease and read of the
      // conversation, which Redis runs after the journal write. A pass for a message that turns
      // out a duplicate finds nothing new to do (its first journaling noted the speaker).
      const user = message.speaker.userKey;
      const withSpeaker = !speakers.noted(message.conversation, user);
      const recorded = journal.record(message, withSpeaker);
      const now = workers.admit(t, message.speaker.userKey);
      // A pass started for this message asks for the lease right after its journal write: its answer
      // tells the acknowledgement whether another instance holds the thread.
      const starts = now && t.working === null;
      if (now) schedule(t);
      const attempt = starts ? t.leaseAttempt : null;
      let fresh = false;
      try {
        fresh = await recorded;
        if (fresh && withSpeaker) speakers.note(message.conversation, user);
      } finally {
        if (!fresh && mine) t.unfetched.delete(message.id);
        if (!fresh && ownIo) t.ios.delete(message.id);
      }
      // Parked behind the user's other waiting threads: the store holds it until its turn comes.
      if (fresh && !now) workers.park(t, message.id);
      recordSubmitted(message, fresh);
      if (!fresh) return { accepted: false, reason: "duplicate" };
      acknowledge(options, journal, t, message, io ?? options.io(t.key), running, attempt).catch(
        (err: unknown) => log.warn({ err, conversation: t.key }, "queued acknowledgement failed"),
      );
      return { accepted: true };
    },

    spokeIn: (key, user) => speakers.spokeIn(key, user),

    threadReach: (key) => journal.threadReach(key),

    async reset(key) {
      abortTurn(key, "reset");
      await control(key, resetWindow);
    },

    async erase(isTheirs) {
      const spoken = await speakers.spokenBy(isTheirs);
      for (const conversation of spoken) {
        await control(conversation, eraseFrom({ isTheirs }));
        await speakers.forget(conversation, isTheirs);
      }
      return spoken.length;
    },

    async compact(key) {
      await control(key, compactWindow);
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
      workers.close();
      sweep.stop();
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
