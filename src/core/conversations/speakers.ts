/**
 * Who has spoken in a conversation: one store key per (conversation, user), written when their
 * message is journaled. A thread's reset belongs to these people (and to admins).
 */
import type { Store } from "../../store/types.js";
import { type ConversationKey, hashTag, type UserKey } from "../keys.js";

const key = (conversation: ConversationKey, user: UserKey) => `conv:speaker:${hashTag(conversation)}:${user}`;

/** `retentionMs`: kept as long as the conversation (refreshed with each message of theirs). */
export function createSpeakers(store: Store, retentionMs: number) {
  return {
    record: (conversation: ConversationKey, user: UserKey) =>
      store.set(key(conversation, user), 1, retentionMs),
    spokeIn: async (conversation: ConversationKey, user: UserKey) =>
      (await store.get<number>(key(conversation, user))) !== undefined,
  };
}
