/**
 * What the people in a conversation are told while their message waits: queued behind the slot
 * limit, held back by their turn rate, or taken while a turn (here or on another instance) runs.
 * Best effort: a notice that fails is logged, never the message's problem.
 */
import { type UserKey, userThrottleToldKey } from "../keys.js";
import { log } from "../log.js";
import type { Journal } from "./journal.js";
import type { Thread } from "./thread-state.js";
import type { ConversationIO, ConversationsOptions, InboundMessage } from "./types.js";

const defaultIo = (options: ConversationsOptions, t: Thread): ConversationIO =>
  t.ios.values().next().value ?? options.io(t.key);

export const tellQueued = (options: ConversationsOptions, t: Thread, position: number): void => {
  const ahead = position === 1 ? "1 conversation is" : `${position} conversations are`;
  defaultIo(options, t)
    .reporter.status(`Queued: ${ahead} ahead of this one. I'll start as soon as a slot frees up.`)
    .catch((err: unknown) => log.warn({ err, conversation: t.key }, "queued status failed"));
};

/**
 * Told once per burst, in the thread of its first held-back turn: nothing is dropped. Once for the
 * fleet: each instance calls this for the first of the user's turns it holds back, and the first
 * to mark the user in the store tells them; the mark lasts until their bucket would be full again.
 */
export const tellThrottled = (
  options: ConversationsOptions,
  t: Thread,
  user: UserKey,
  waitMs: number,
): void => {
  const { perMinute, burst } = options.limits.userTurns;
  const refilledMs = Math.ceil(waitMs + (burst * 60_000) / perMinute);
  const every = Math.max(1, Math.round(60 / perMinute));
  options.store
    .setIfAbsent(userThrottleToldKey(user), "1", refilledMs)
    .then(async (first) => {
      if (!first) return;
      log.info({ conversation: t.key, waitMs }, "turns held back: the user is over their turn rate");
      await defaultIo(options, t).reporter.notice(
        "You've sent me a lot at once, so I'm taking it a little slower: I'll answer every message, " +
          `in order, about one every ${every} s (next in about ${Math.max(1, Math.ceil(waitMs / 1000))} s). ` +
          "Nothing is lost.",
      );
    })
    .catch((err: unknown) => log.warn({ err, conversation: t.key, user }, "throttle notice failed"));
};

/**
 * `running`: a turn was running here when the message came (it reads it at its next step).
 * `attempt`: the lease attempt of the pass this message started (`Thread.leaseAttempt`), sent after
 * its journal write: refused, another instance held the thread then, and takes the message when it
 * lets go. Without one (a pass already working here, or none started), the lease is read.
 */
export const acknowledge = async (
  options: ConversationsOptions,
  journal: Journal,
  t: Thread,
  message: InboundMessage,
  io: ConversationIO,
  running: boolean,
  attempt: Promise<boolean | undefined> | null,
): Promise<void> => {
  if (!running && attempt) {
    // Taken (this instance runs it) or the store failed (the pass tells of that): nothing to say.
    if ((await attempt) !== false) return;
  } else if (!running) {
    // Not running here: say it was taken only if another instance is running this thread now.
    const holder = await options.store.get<string>(journal.lockKey(t.key));
    if (holder === undefined || holder.startsWith(`${options.instanceId}#`)) return;
  }
  if (io.acknowledgeQueued) await io.acknowledgeQueued(message);
  else await io.reporter.status("Got it. I'll read this at my next step.");
};
