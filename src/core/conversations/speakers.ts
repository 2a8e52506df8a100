/**
 * Who has spoken in a conversation: one list per conversation (`conv:speakers:{conversation}`) of
 * the user keys that wrote in it, appended when a person's message is first journaled here. It is
 * one of the keys that end with the conversation (the journal's expiry group), so it lasts as long
 * as the thread does, however long ago a person spoke in it: a thread's reset belongs to these
 * people (and to admins), and an erasure finds every conversation a person wrote in.
 */
import type { Store } from "../../store/types.js";
import { type ConversationKey, hashTag, hashTagOf, type UserKey } from "../keys.js";

const PREFIX = "conv:speakers:";
/** The store key of a conversation's speakers (the journal keeps it in the conversation's expiry). */
export const speakersKey = (conversation: ConversationKey) => `${PREFIX}${hashTag(conversation)}`;

/** Pairs this instance has written, so a person's next messages cost no write (bounded). */
const NOTED_MAX = 20_000;

/**
 * `retentionMs`: the conversation's retention, which the list is written with. The list is
 * appended to by the journal, in the step that journals a message (`Journal.record`): this module
 * says whether the speaker still needs writing, and reads and rewrites the list.
 */
export function createSpeakers(store: Store, retentionMs: number) {
  const noted = new Set<string>();
  const pairOf = (conversation: ConversationKey, user: UserKey) => `${conversation}\n${user}`;
  const expiry = (c: ConversationKey) => ({ keys: [speakersKey(c)], ttlMs: retentionMs });
  return {
    /** Whether this instance has written `user` into the conversation's list (so need not again). */
    noted: (conversation: ConversationKey, user: UserKey): boolean => noted.has(pairOf(conversation, user)),
    /** `user` was written into the conversation's list. */
    note(conversation: ConversationKey, user: UserKey): void {
      noted.add(pairOf(conversation, user));
      if (noted.size > NOTED_MAX) noted.delete(noted.values().next().value as string);
    },
    /** The conversations where a person (`isTheirs` of a user key) spoke: a scan, erasures are rare. */
    async spokenBy(isTheirs: (user: UserKey) => boolean): Promise<ConversationKey[]> {
      const keys = await store.keys(PREFIX);
      const found = await Promise.all(
        keys.map(async (k) => {
          const conversation = hashTagOf(k);
          if (conversation === undefined) return [];
          const users = await store.range<UserKey>(k, 0, -1);
          return users.some(isTheirs) ? [conversation] : [];
        }),
      );
      return found.flat();
    },
    /** Take the erased person out of a conversation's list (the rest keep their place and expiry). */
    async forget(conversation: ConversationKey, isTheirs: (user: UserKey) => boolean): Promise<void> {
      const key = speakersKey(conversation);
      const users = await store.range<UserKey>(key, 0, -1);
      const rest = [...new Set(users.filter((u) => !isTheirs(u)))];
      await store.delete(key);
      if (rest.length > 0) await store.append(key, rest, expiry(conversation));
      for (const pair of noted)
        if (pair.startsWith(`${conversation}\n`) && isTheirs(pair.split("\n")[1]!)) noted.delete(pair);
    },
    spokeIn: async (conversation: ConversationKey, user: UserKey) =>
      (await store.range<UserKey>(speakersKey(conversation), 0, -1)).includes(user),
  };
}
