/**
 * Bring a thread's in-memory view up to date with the store: keep it while the log is as it left it,
 * rebuild it from the log when the log moved on (or the view went stale), and reseed the log from it
 * when the store lost what it held. Also reads the inbox into the view.
 */

import { log } from "../log.js";
import type { Journal, Snapshot } from "./journal.js";
import type { LogEntry } from "./log-entry.js";
import {
  answerSince,
  expiredSummary,
  messagesSince,
  progressOf,
  recallDrop,
  replay,
  tailOrphans,
  trimmedSummary,
} from "./replay.js";
import type { Live, Thread, ThreadEnv } from "./thread-state.js";
import type { InboundMessage } from "./types.js";

/**
 * Rebuild from the log unless the in-memory agent is current. `snap`: the lengths were just read
 * with the lease (`Journal.snapshot`), so they are not read again.
 */
export async function restore(t: Thread, env: ThreadEnv, snap?: Snapshot): Promise<Live> {
  const { journal, options } = env;
  const [length, inboxLength] = snap
    ? [snap.logLength, snap.inboxLength]
    : await Promise.all([journal.logLength(t.key), journal.inboxLength(t.key)]);
  const held = heldWithin(t, options.limits.retentionMs);
  // Shorter than what this instance read or wrote: the store lost it (no writer removes entries).
  if (held && (length < held.logLength || inboxLength < held.fetched)) return reseed(t, env, held);
  if (held && !held.stale && held.logLength === length) {
    held.syncedAt = Date.now();
    return held;
  }
  // An empty log (a new conversation) needs no read.
  const entries = length === 0 ? [] : await journal.readLog(t.key);
  const progress = progressOf(entries);
  const at = Date.now();
  const repair: LogEntry[] = tailOrphans(entries).map((message) => ({ type: "message", message, at }));
  // A rebuilt idle conversation keeps its last recalled turns; an open turn is resumed exactly.
  if (!progress.openTurn) {
    const { working, summary } = replay(entries);
    const turns = options.limits.recallTurns;
    const drop = recallDrop(working, turns);
    if (drop > 0) repair.push({ type: "trim", drop, summary: trimmedSummary(summary, turns), at });
  }
  // A thread whose conversation the retention horizon deleted starts a new window, and says so.
  // (Read with the lease in `snap` when there is one: no round trip of its own on a message's path.)
  if (length === 0 && (snap ? snap.existed : await journal.existed(t.key)))
    repair.push({ type: "trim", drop: 0, summary: expiredSummary(at), at });
  let logLength = entries.length;
  if (repair.length) logLength = await journal.appendLog(t.key, repair, logLength);
  const open = progress.openTurn;
  t.live = {
    agent: options.newAgent(replay([...entries, ...repair])),
    logLength,
    taken: progress.taken,
    fetched: progress.taken,
    pending: [],
    open: open && {
      from: open.from,
      answer: answerSince(entries, open.logIndex),
      started: messagesSince(entries, open.logIndex),
      ...(open.trace ? { trace: open.trace } : {}),
    },
    stale: false,
    reseeded: false,
    syncedAt: Date.now(),
  };
  return t.live;
}

/**
 * The thread's in-memory view, unless it is older than the retention horizon: the store may have
 * deleted the conversation since (then the view must not reseed it), and the messages journaled here
 * that long ago went with it.
 */
function heldWithin(t: Thread, retentionMs: number): Live | null {
  const held = t.live;
  if (!held) return null;
  const now = Date.now();
  if (now - held.syncedAt < retentionMs) return held;
  t.live = null;
  t.delivered = null;
  for (const [id, m] of t.unfetched) if (now - m.receivedAt >= retentionMs) t.unfetched.delete(id);
  log.info(
    { conversation: t.key },
    "conversation view idle past the retention horizon; rebuilt from the store",
  );
  return null;
}

/**
 * The store lost the conversation (Redis restarted empty): restart its log with the window this
 * instance holds (tool calls left open get their synthetic results), so the next request extends the
 * last one; journal again the messages read but not yet answered and those journaled here but not
 * yet read, whose inbox is gone. The inbox starts over with them.
 */
async function reseed(t: Thread, env: ThreadEnv, held: Live): Promise<Live> {
  const { journal, options } = env;
  const at = Date.now();
  const state = replay([{ type: "reseed", ...held.agent.state(), at }]);
  const logLength = await journal.replaceLog(t.key, [{ type: "reseed", ...state, at }]);
  t.live = {
    agent: options.newAgent(state),
    logLength,
    taken: 0,
    fetched: 0,
    pending: [],
    open: null,
    stale: false,
    reseeded: true,
    syncedAt: Date.now(),
  };
  t.delivered = null;
  const again = [...held.pending, ...t.unfetched.values()];
  let journaled = 0;
  for (const m of again) if (await journal.recordAgain(m)) journaled++;
  log.warn(
    { conversation: t.key, kept: state.working.length, journaledAgain: journaled },
    "the store lost this conversation; its log restarts from the window held here",
  );
  return t.live;
}

/** Read the inbox past what `live` has read; from `snap` when it holds all of that. */
export async function fetchInbox(t: Thread, live: Live, journal: Journal, snap?: Snapshot): Promise<void> {
  const fromSnap =
    snap && snap.inbox.from <= live.fetched && snap.inbox.from + snap.inbox.items.length === snap.inboxLength;
  const items = fromSnap
    ? snap.inbox.items.slice(live.fetched - snap.inbox.from)
    : await journal.inboxFrom(t.key, live.fetched);
  takeFetched(t, live, items);
}

/** Inbox items read from `live.fetched` on become pending. */
export function takeFetched(t: Thread, live: Live, items: readonly InboundMessage[]): void {
  live.fetched += items.length;
  live.pending.push(...items);
  for (const m of items) t.unfetched.delete(m.id);
}

/**
 * Messages journaled here that the inbox, read to its end, never handed back: journaled again.
 * The claim makes it idempotent: one that is there (read by another instance, or read here before
 * it was noted) is not appended twice. True when one was missing (the store lost it).
 */
export async function journalMissing(t: Thread, journal: Journal): Promise<boolean> {
  let missing = false;
  for (const m of [...t.unfetched.values()]) {
    t.unfetched.delete(m.id);
    if (await journal.recordAgain(m)) missing = true;
  }
  return missing;
}
