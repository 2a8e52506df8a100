/**
 * The bound on what one user has waiting in this process's memory (DESIGN.md, Fairness): at most
 * `WAITING_PER_USER` of their threads wait for a slot here; a flood beyond it waits in the store
 * only (journaled, with its "has work" marker) and its threads are let in, in the order they came,
 * as the user's earlier ones start. 10,000 mentions at once keep memory bounded.
 */
import type { ConversationKey, UserKey } from "../keys.js";

export const WAITING_PER_USER = 32;

export interface Backlog {
  /**
   * Whether a new message of `user` in conversation `key` may be scheduled now (`working`: the
   * conversation's worker runs already). False: the conversation is parked, to be let in by `stopped`.
   */
  admit(key: ConversationKey, user: UserKey, working: boolean): boolean;
  /** One more of `user`'s threads waits for a slot here. */
  waiting(user: UserKey): void;
  /** One of `user`'s threads stopped waiting: the parked conversations to schedule now, in order. */
  stopped(user: UserKey): ConversationKey[];
  /** Conversations parked by `admit` (the sweep leaves them to it). */
  readonly parked: ReadonlySet<ConversationKey>;
}

export function createBacklog(): Backlog {
  /** Per user: threads whose pass waits for a slot here, and those parked behind them (in order). */
  const waitingBy = new Map<UserKey, number>();
  const parkedBy = new Map<UserKey, ConversationKey[]>();
  const parked = new Set<ConversationKey>();
  const room = (user: UserKey) => (waitingBy.get(user) ?? 0) < WAITING_PER_USER;
  return {
    admit(key, user, working) {
      if (working || parked.has(key) || room(user)) return !parked.has(key);
      parked.add(key);
      const line = parkedBy.get(user) ?? [];
      line.push(key);
      parkedBy.set(user, line);
      return false;
    },
    waiting(user) {
      waitingBy.set(user, (waitingBy.get(user) ?? 0) + 1);
    },
    stopped(user) {
      const n = (waitingBy.get(user) ?? 1) - 1;
      if (n > 0) waitingBy.set(user, n);
      else waitingBy.delete(user);
      const line = parkedBy.get(user);
      const out: ConversationKey[] = [];
      // Each let in will wait too: counted as it starts, so let in only what the room holds now.
      while (line && line.length > 0 && (waitingBy.get(user) ?? 0) + out.length < WAITING_PER_USER) {
        const key = line.shift()!;
        parked.delete(key);
        out.push(key);
      }
      if (line?.length === 0) parkedBy.delete(user);
      return out;
    },
    parked,
  };
}
