/**
 * Who has spoken in a conversation: one store key per (conversation, user), written when their
 * message is journaled. A thread's reset belongs to these people (and to admins).
 */
import type { Store } from "../../store/types.js";
import { type ConversationKey, hashTag, hashTagOf, type UserKey } from "../keys.js";

const PREFIX = "conv:speaker:";
const key = (conversation: ConversationKey, user: UserKey) => `${PREFIX}${hashTag(conversation)}:${user}`;

/** `retentionMs`: kept as long as the conversation (refreshed with each message of theirs). */
export function createSpeakers(store: Store, retentionMs: number) {
  return {
    record: (conversation: ConversationKey, user: UserKey) =>
      store.set(key(conversation, user), 1, retentionMs),
    /**
     * The conversations where a person (`isTheirs` of a user key) spoke, within the retention: the
     * erasure's index. A scan of the speaker keys: erasures are rare.
     */
    async spokenBy(
      isTheirs: (user: UserKey) => boolean,
    ): Promise<Array<{ conversation: ConversationKey; key: string }>> {
      const keys = await store.keys(PREFIX);
      return keys.flatMap((k) => {
        const end = k.indexOf("}:");
        const conversation = hashTagOf(k);
        if (end < 0 || conversation === undefined || !isTheirs(k.slice(end + 2))) return [];
        return [{ conversation, key: k }];
      });
    },
    forgetKey: (k: string) => store.delete(k),
    spokeIn: async (conversation: ConversationKey, user: UserKey) =>
      (await store.get<number>(key(conversation, user))) !== undefined,
  };
}
