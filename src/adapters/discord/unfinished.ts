/**
 * What a dead process left of an answer it was writing on Discord. A turn resumed after a crash
 * runs again (or posts its logged answer); the draft the dead process showed (messages edited as
 * text arrived, the last one carrying Stop) would stay beside that answer, half written, for good.
 * So a draft can be found after a restart, and is removed before the resumed turn goes on.
 *
 * Discord messages carry no metadata, and only a draft's last message carries Stop: its earlier
 * messages look like any other of Neo's (a notice is plain text too). So the id of a draft's first
 * message is written to the store when it is posted: one write per draft (one per answer, unless a
 * response is taken back and another is drafted). After a restart, the draft is Neo's messages from
 * that one on without files or buttons other than Stop; it is unfinished while one still carries
 * Stop (a finished draft is the answer: it stays, and a resumed `say` skips what of it is there).
 */
import { type REST, Routes } from "discord.js";
import { z } from "zod";
import { hashTag } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { AnswerKey } from "../../core/reporter.js";
import type { Store } from "../../store/types.js";
import { isStopCustomId } from "./stop-button.js";

/** A resumed turn comes back within minutes; a day covers a long outage. */
const DRAFT_TTL_MS = 24 * 60 * 60 * 1000;
/** Messages read after the opening one: a turn posts a handful. */
const LOOK_LIMIT = 100;

const draftKey = (conversation: string, key: AnswerKey) => `discord:draft:${hashTag(conversation)}|${key.id}`;

/** Remember the first message of the draft of the answer `key` (a failure only loses the clean-up after a crash). */
export async function recordDraft(
  store: Store,
  conversation: string,
  key: AnswerKey,
  messageId: string,
): Promise<void> {
  await store
    .set(draftKey(conversation, key), messageId, DRAFT_TTL_MS)
    .catch((err: unknown) => log.warn({ err, conversation }, "discord: could not note an answer draft"));
}

const messagesSchema = z.array(
  z.object({
    id: z.string(),
    author: z.object({ id: z.string() }),
    attachments: z.array(z.unknown()).default([]),
    components: z
      .array(z.object({ components: z.array(z.object({ custom_id: z.string().optional() })).default([]) }))
      .default([]),
  }),
);

export interface UnfinishedOptions {
  rest: REST;
  store: Store;
  conversation: string;
  channelId: string;
  neoId: string;
}

/** Remove the unfinished draft of the answer `key`, if its turn left one. */
export async function dropUnfinishedDraft(o: UnfinishedOptions, key: AnswerKey): Promise<void> {
  const first = await o.store.get<string>(draftKey(o.conversation, key));
  if (!first) return;
  const raw = await o.rest.get(Routes.channelMessages(o.channelId), {
    query: new URLSearchParams({ after: key.id, limit: String(LOOK_LIMIT) }),
  });
  const buttons = (m: z.infer<typeof messagesSchema>[number]) =>
    m.components.flatMap((row) => row.components.map((c) => c.custom_id ?? ""));
  // Snowflakes sort as the times they name.
  const draft = messagesSchema
    .parse(raw)
    .filter(
      (m) =>
        m.author.id === o.neoId &&
        BigInt(m.id) >= BigInt(first) &&
        m.attachments.length === 0 &&
        buttons(m).every(isStopCustomId),
    );
  if (!draft.some((m) => buttons(m).length > 0)) return;
  for (const m of draft) await o.rest.delete(Routes.channelMessage(o.channelId, m.id));
}
