/**
 * Who has spoken in a conversation: one store key per (conversation, user), written when their
 * message is journaled. A thread's reset belongs to these people (and to admins).
 */
import type { Store } from "../../store/types.js";
import type { ConversationKey, UserKey } from "../keys.js";

/** Kept as long as a conversation is likely to be reset; a thread idle longer starts over anyway. */
const SPEAKER_TTL_MS = 90 * 24 * 60 * 60 * 1000;

const key = (conversation: ConversationKey, user: UserKey) => `conv:speaker:${conversation}:${user}`;

export function createSpeakers(store: Store) {
  return {
    record: (conversation: ConversationKey, user: UserKey) =>
      store.set(key(conversation, user), 1, SPEAKER_TTL_MS),
    spokeIn: async (conversation: ConversationKey, user: UserKey) =>
      (await store.get<number>(key(conversation, user))) !== undefined,
  };
}
