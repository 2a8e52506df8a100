/**
 * Every new turn costs its requester one token of their bucket in the store (Store.takeToken),
 * exactly once, whichever instance runs it and however it found the work. A pass's slot takes the
 * token of the user it expects the turn to be for (sent with the lease and the state read: no
 * round trip of its own); the turn spends it when that was right, else takes its requester's now.
 * A token a pass did not spend (another instance held the conversation or had already answered,
 * or the pass guessed the wrong person) is given back, so the bucket counts turns, not attempts.
 * Work found by a sweep, whose requester this instance cannot know before it reads the inbox, takes
 * no token with its slot.
 */

import type { Store } from "../../store/types.js";
import type { UserKey } from "../keys.js";
import { userTurnsKey } from "../keys.js";
import { log } from "../log.js";
import type { Thread } from "./thread-state.js";
import type { ConversationLimits } from "./types.js";

export interface TurnTokens {
  /** 0 = taken; else the ms until one is there. */
  take(user: UserKey): Promise<number>;
  giveBack(user: UserKey): Promise<void>;
}

export function createTurnTokens(store: Store, limits: ConversationLimits): TurnTokens {
  return {
    take: (user) => store.takeToken(userTurnsKey(user), limits.userTurns),
    giveBack: (user) => store.returnToken(userTurnsKey(user), limits.userTurns),
  };
}

/**
 * Charge the turn `user` asked for: the pass's token if it was taken for them, else one taken now.
 * False: they are over their rate; the turn waits for its own slot (and the user hears why).
 */
export async function chargeTurn(t: Thread, tokens: TurnTokens, user: UserKey): Promise<boolean> {
  if (t.token === user) {
    t.token = null;
    return true;
  }
  return (await tokens.take(user)) === 0;
}

/** The pass is over: a token it took and no turn spent goes back to its user. */
export function giveBackUnspent(t: Thread, tokens: TurnTokens): void {
  const user = t.token;
  t.token = null;
  if (user === null) return;
  tokens.giveBack(user).catch((err: unknown) =>
    // Only costs the user one turn's wait, once.
    log.warn({ err, conversation: t.key }, "could not give back an unspent turn token"),
  );
}
