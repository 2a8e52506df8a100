/**
 * Work on one conversation while holding its lease: bring the in-memory agent up to date with the
 * log, finish a turn a crash left open, then run turns for untaken inbox entries in order, one
 * speaker per turn: the requester's later messages join the running turn (at its start and at its
 * cancellation points); anyone else's wait for a turn of their own. Every transcript event is appended to
 * the log before the loop acts on it (the opening message's append goes beside the model call).
 */

import { activeSpan, inSpan } from "../../ops/tracing/spans.js";
import { isShownAnswer } from "../agent/notes.js";
import { AnswerShownError } from "../agent/turn.js";
import type { TurnContext, TurnInput, TurnStatus } from "../agent/types.js";
import { log } from "../log.js";
import type { AnswerKey, Reporter } from "../reporter.js";
import { placeOf, RESUME_NOTE, requesterRun, toTurnInput } from "./inbound.js";
import { LogConflictError, type Snapshot } from "./journal.js";
import type { Lease } from "./lease.js";
import type { LogEntry } from "./log-entry.js";
import { recordAnswered, recordTurnStart, turnSpan, turnStartEntry } from "./observe.js";
import { lostReply } from "./replay.js";
import { fetchInbox, journalMissing, restore, takeFetched } from "./restore.js";
import { type AbortReason, isStoreTrouble, type Live, type Thread, type ThreadEnv } from "./thread-state.js";
import { turnContext } from "./turn-context.js";
import { chargeTurn } from "./turn-tokens.js";
import type { ConversationIO, InboundMessage } from "./types.js";

/**
 * What a drain did: the inbox entries the transcript holds; `letGo`: the lease was let go with the
 * last turn's end (nothing else had come), and the inbox then held this many entries.
 */
export interface Drained {
  taken: number;
  letGo?: number;
}

/**
 * Work until the inbox is fully taken (or shutdown / lease loss). `snap`: the conversation as read
 * with the lease; it stands for the first reads of the log and inbox.
 */
export async function drain(t: Thread, lease: Lease, env: ThreadEnv, snap?: Snapshot): Promise<Drained> {
  const { journal } = env;
  let live = await restore(t, env, snap);
  // Good for the first look at the inbox only, and only if nothing was written since it was read.
  let first: Snapshot | undefined = snap;
  /** The conversation as read with the end of the turn that just ran: the loop's next look. */
  let look: TurnEnd | undefined;
  const cut = t.interrupted;
  t.interrupted = null;
  if (cut) {
    first = undefined;
    live = await finishCut(t, live, lease, env, cut);
  }
  if (live.open) {
    first = undefined;
    const open = live.open;
    live.open = null;
    const [opening] = await journal.inboxFrom(t.key, open.from);
    const key = opening ? { id: opening.id, resumed: true as const } : undefined;
    // Unless this process posted the answer itself, the one that ran the turn died in it, perhaps
    // while the answer was shown as it was written: that draft goes before the turn goes on.
    if (key && t.delivered !== key.id) await dropUnfinished(env.options.io(t.key).reporter, key, t.key);
    if (open.answer !== undefined) {
      // The answer is logged before it is posted, and the end marker after: a crash in between may
      // have left it unposted. Post it again as the turn showed it (a long answer: the same file and
      // message), under the same key, marked resumed (adapters post only what is not there yet),
      // unless this process knows it posted it; then close the turn.
      if (t.delivered !== opening?.id)
        await live.agent.show(open.answer, env.options.io(t.key).reporter, key);
      live.logLength = await journal.appendLog(t.key, [endEntry("answered")], live.logLength);
      t.delivered = null;
    } else {
      await tracedTurn(t, live, lease, env, opening!, open.started ? "resume" : "rerun", open.trace);
    }
  }
  for (;;) {
    if (env.closing() || lease.lost) return { taken: live.taken };
    if (!first) {
      // Lengths and the unread inbox in one round trip (read with the last turn's end, if one just
      // ran): the view is checked and the inbox read together.
      first =
        look?.snap ?? (await journal.snapshot(t.key, t.live && !t.live.stale ? t.live.fetched : undefined));
      live = await restore(t, env, first);
    }
    // The "has work" marker, cleared with the last turn's end when nothing else was waiting.
    const cleared = look?.cleared;
    look = undefined;
    for (const c of t.controls.splice(0)) {
      first = undefined;
      try {
        await c.run(live, env, t);
        c.done();
      } catch (err) {
        c.done(err);
        throw err;
      }
      live = await restore(t, env);
    }
    await fetchInbox(t, live, journal, first);
    first = undefined;
    if (live.pending.length === 0) {
      // A message journaled just before the clear: take it now rather than lose its marker. The
      // clear and the read are one atomic step, the read after the clear.
      const after =
        cleared && cleared.from === live.fetched
          ? cleared.items
          : await journal.clearPending(t.key, live.fetched);
      takeFetched(t, live, after);
      if (live.pending.length === 0 && t.unfetched.size > 0 && (await journalMissing(t, journal))) {
        await fetchInbox(t, live, journal);
      }
      if (live.pending.length === 0) return { taken: live.taken };
      await journal.markPending(t.key);
    } else if (cleared) {
      // Cleared with the turn's end, yet work came: the marker goes back before it is run.
      await journal.markPending(t.key);
    }
    // A turn of this pass handed its slot on (its answer was shown outside it): the next turn
    // queues for one.
    if (!t.slot?.held) return { taken: live.taken };
    // Its requester over their rate: the turn queues for a slot of its own under their name.
    if (!(await chargeTurn(t, env.tokens, live.pending[0]!.speaker.userKey))) return { taken: live.taken };
    look = await tracedTurn(t, live, lease, env, live.pending.shift()!, "new", undefined, true);
    if (look?.letGo !== undefined) return { taken: live.taken, letGo: look.letGo };
    // Fair share: another turn waits for a slot, so this pass lets go; the thread queues again.
    if (t.slot.contended()) return { taken: live.taken };
  }
}

/**
 * How a turn left the conversation: read with its end, and the marker cleared with it (`from`: inbox
 * read from); `letGo`: the lease went with them, and the inbox then held this many entries.
 */
interface TurnEnd {
  snap: Snapshot;
  cleared?: { from: number; items: InboundMessage[] };
  letGo?: number;
}

/**
 * Finish a turn the store cut, now that it answers again. Shown answer: the log gets what it missed
 * (the answer, if the log kept the turn; the end). Otherwise, if the log kept the turn, its open turn
 * resumes as after a crash (`drain`); if the log was reseeded, the written answer is posted (adapters
 * skip what is there) or the turn resumes.
 */
async function finishCut(
  t: Thread,
  live: Live,
  lease: Lease,
  env: ThreadEnv,
  cut: NonNullable<Thread["interrupted"]>,
): Promise<Live> {
  const { journal } = env;
  const { opening, io, answer } = cut;
  if (cut.shown && answer !== undefined) {
    // The log kept the turn open: it may hold the answer (written, but its acknowledgement lost).
    const missed: LogEntry[] =
      live.open && live.open.answer === undefined
        ? [{ type: "message", message: { role: "assistant", content: answer }, at: Date.now() }]
        : [];
    live.logLength = await journal.appendLog(t.key, [...missed, endEntry("answered")], live.logLength);
    // Rebuilt from the log, which now holds the answer.
    if (live.open) t.live = null;
    return restore(t, env);
  }
  if (!live.reseeded) return live;
  if (answer !== undefined) {
    await live.agent.show(answer, io.reporter, { id: opening.id, resumed: true });
    live.logLength = await journal.appendLog(t.key, [endEntry("answered")], live.logLength);
  } else {
    t.ios.set(opening.id, io);
    await tracedTurn(t, live, lease, env, opening, "resume", live.open?.trace);
  }
  return restore(t, env);
}

/** Cosmetic next to the answer: a failure is logged, and the turn goes on. */
async function dropUnfinished(reporter: Reporter, key: AnswerKey, conversation: string): Promise<void> {
  try {
    await reporter.dropUnfinished?.(key);
  } catch (err) {
    log.warn({ err, conversation }, "could not remove an answer draft a previous process left unfinished");
  }
}

function endEntry(status: TurnStatus): LogEntry {
  return { type: "turn-end", status, at: Date.now() };
}

/** The IO of a turn: the opening message's override, else the conversation's default. */
function ioOf(t: Thread, env: ThreadEnv, id: string): ConversationIO {
  const io = t.ios.get(id);
  t.ios.delete(id);
  return io ?? env.options.io(t.key);
}

/** Log the reply a resumed turn lost (`lostReply`), and resume from the transcript that holds it. */
async function recordLostReply(t: Thread, live: Live, env: ThreadEnv): Promise<void> {
  const state = live.agent.state();
  const lost = lostReply(state.working);
  if (lost.length === 0) return;
  const at = Date.now();
  const entries: LogEntry[] = lost.map((message) => ({ type: "message", message, at }));
  live.logLength = await env.journal.appendLog(t.key, entries, live.logLength);
  live.agent = env.options.newAgent({ ...state, working: [...state.working, ...lost] });
}

/** A turn in its trace's root span; a resumed one continues the trace its `turn-start` recorded. */
function tracedTurn(
  t: Thread,
  live: Live,
  lease: Lease,
  env: ThreadEnv,
  opening: InboundMessage,
  mode: "new" | "resume" | "rerun",
  trace?: string,
  mayLetGo = false,
): Promise<TurnEnd | undefined> {
  return inSpan(
    "invoke_agent Neo",
    turnSpan(t.key, mode, trace, mode === "new" ? opening.receivedAt : undefined),
    () => runTurn(t, live, lease, env, opening, mode, mayLetGo),
  );
}

async function runTurn(
  t: Thread,
  live: Live,
  lease: Lease,
  env: ThreadEnv,
  opening: InboundMessage,
  mode: "new" | "resume" | "rerun",
  mayLetGo: boolean,
): Promise<TurnEnd | undefined> {
  const { journal } = env;
  if (mode === "resume") await recordLostReply(t, live, env);
  // A new turn's start is logged with its first event (one write, no round trip of its own): a
  // crash before that leaves the message untaken, and it runs again from the start.
  const starting: LogEntry[] = [];
  const takenBefore = live.taken;
  if (mode === "new") {
    starting.push(turnStartEntry(live.taken, opening.id));
    live.taken++;
    recordTurnStart(opening);
  }
  const io = ioOf(t, env, opening.id);
  const controller = new AbortController();
  lease.guard(controller);
  t.turn = controller;
  // Handed to the loop but not yet logged as taken; logged with the next event, before the loop moves on.
  const handed: InboundMessage[] = [];
  const takeHanded = (): LogEntry[] => {
    const entries = starting.splice(0);
    if (handed.length === 0) return entries;
    entries.push({
      type: "taken",
      from: live.taken,
      count: handed.length,
      ids: handed.map((m) => m.id),
      at: Date.now(),
    });
    live.taken += handed.length;
    handed.length = 0;
    return entries;
  };
  /** The start never reached the log: the turn did not begin; its messages are first in line again. */
  const unstarted = (): boolean => {
    if (mode !== "new" || starting.length === 0) return false;
    live.pending.unshift(opening, ...handed);
    live.taken = takenBefore;
    t.ios.set(opening.id, io);
    return true;
  };
  const ctx: TurnContext = {
    ...turnContext(t, live, env, io, opening.shared, placeOf(opening), controller.signal, takeHanded),
    answerKey: { id: opening.id },
    // The answer is logged; showing it may wait for the platform's pacing: not in a turn slot.
    modelWorkDone: () => t.slot?.handOff(),
    drainInbox: (): TurnInput[] => {
      const out = live.pending.splice(0, requesterRun(live.pending, opening));
      for (const m of out) t.ios.delete(m.id);
      handed.push(...out);
      return out.map(toTurnInput);
    },
  };
  const input = mode === "resume" ? { text: RESUME_NOTE, speaker: opening.speaker } : toTurnInput(opening);
  const lastBefore = live.agent.state().working.at(-1);
  let status: TurnStatus;
  try {
    status = (await live.agent.chat(input, ctx)).status;
  } catch (err) {
    const shown = err instanceof AnswerShownError;
    const cause = shown ? err.cause : err;
    // The store failed the first write: nothing of the turn was logged, so it has not begun.
    if (!shown && (isStoreTrouble(cause) || cause instanceof LogConflictError) && unstarted()) {
      lease.guard(null);
      t.turn = null;
      throw cause;
    }
    if (!controller.signal.aborted && isStoreTrouble(cause)) {
      // The store went away mid-turn: the turn is finished when it answers again (`drain`), not failed.
      log.warn(
        { err: cause, conversation: t.key },
        "turn cut by the store; it is finished when the store is back",
      );
      const last = live.agent.state().working.at(-1);
      const answer = last !== lastBefore && isShownAnswer(last) ? last.content.trim() : undefined;
      t.interrupted = { opening, io, answer, shown };
      throw cause;
    }
    if (!controller.signal.aborted) {
      log.error({ err, conversation: t.key }, "turn failed");
      await io.reporter.notice("Sorry, something went wrong on my side and I could not finish that.");
    }
    status = controller.signal.aborted ? "cancelled" : "failed";
  } finally {
    lease.guard(null);
    t.turn = null;
  }
  activeSpan().setAttribute("neo.turn.status", status);
  const reason = controller.signal.aborted ? (controller.signal.reason as AbortReason) : null;
  if (reason === "shutdown" || reason === "lease") {
    // Left open on purpose: the next holder resumes it. Drop our view; it may be rebuilt.
    t.live = null;
    return undefined;
  }
  const tail = [...takeHanded(), endEntry(status)];
  // Said and posted: if the store fails before the end marker lands, the resume must not re-post.
  if (status === "answered" || status === "partial") {
    t.delivered = opening.id;
    recordAnswered(opening);
  }
  // After a cut or failed turn, rebuild from the log: that is what repairs open tool calls.
  const rebuild = status === "cancelled" || status === "failed";
  // The end logged and the conversation read as it then stands (the drain's next look) in one
  // command: the read runs after the append. When nothing else waits here and nothing new came, the
  // "has work" marker is cleared in it too (the drain's next step, `clearPending`), and the lease let
  // go (the pass's last step) unless a message journaled here may not have reached the inbox yet.
  const from = live.fetched;
  const idle = !rebuild && !live.stale && live.pending.length === 0 && t.controls.length === 0;
  const letting = idle && mayLetGo && t.unfetched.size === 0 ? lease.letGoIn() : undefined;
  let snap: Awaited<ReturnType<typeof journal.appendAndLook>>;
  try {
    snap = await journal.appendAndLook(
      t.key,
      tail,
      live.logLength,
      !rebuild && !live.stale ? from : undefined,
      idle ? { ...(letting ? { letGo: letting.step } : {}) } : undefined,
    );
  } catch (err) {
    letting?.settle(false);
    throw err;
  }
  letting?.settle(snap.cleared);
  live.logLength = snap.logLength;
  t.delivered = null;
  if (rebuild) t.live = null;
  if (!snap.cleared) return { snap };
  return {
    snap,
    cleared: { from, items: snap.inbox.items },
    ...(letting ? { letGo: snap.inboxLength } : {}),
  };
}
