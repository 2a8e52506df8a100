/**
 * What a dead process left of an answer it was writing on Slack. A turn resumed after a crash runs
 * again (or posts its logged answer); the draft the dead process showed (a message still streaming,
 * or posted messages edited in place) would stay beside that answer, half written, for good. So a
 * draft can be found after a restart, and is removed before the resumed turn goes on:
 * - a draft posted as messages (edit mode) carries message metadata naming its answer
 *   (`DRAFT_EVENT`); when it lands, its messages are re-marked as the answer's parts and stay;
 * - a streaming message takes no metadata (`chat.startStream` has no such argument), so its ts is written to the store when the stream starts: one
 *   write per draft streamed (one per answer, unless a response is taken back and another streams).
 *   A stream that landed carries the answer's metadata, and stays.
 */
import { log } from "../../core/log.js";
import type { AnswerKey } from "../../core/reporter.js";
import type { Store } from "../../store/types.js";
import type { ReplyMessage } from "./outbound/lookups.js";
import type { MessageMetadata } from "./outbound/messages.js";
import type { SlackOutbound } from "./outbound.js";

/** Metadata of a draft's posted messages until they are the answer's. */
export const DRAFT_EVENT = "neo_answer_draft";
/** A resumed turn comes back within minutes; a day covers a long outage. */
const STREAM_TTL_MS = 24 * 60 * 60 * 1000;

const streamKey = (key: AnswerKey) => `slack:draft-stream:${key.id}`;

export function draftMetadata(key: AnswerKey): MessageMetadata {
  return { event_type: DRAFT_EVENT, event_payload: { key: key.id } };
}

/** Remember the streaming message of the answer `key` (a failure only loses the clean-up after a crash). */
export async function recordStream(store: Store, key: AnswerKey, channel: string, ts: string): Promise<void> {
  await store
    .set(streamKey(key), ts, STREAM_TTL_MS)
    .catch((err: unknown) =>
      log.warn({ err, channel }, "slack: could not note a streaming answer's message"),
    );
}

export interface UnfinishedOptions {
  out: SlackOutbound;
  store: Store;
  channel: string;
  /** The thread answers go to; "" when there is none. */
  threadTs: string;
  /** The metadata event of the answer's own (finished) parts: those stay. */
  answerEvent: string;
}

/** Remove the unfinished draft of the answer `key`: its stream, and its posted messages not landed. */
export async function dropUnfinishedDraft(o: UnfinishedOptions, key: AnswerKey): Promise<void> {
  const { out, channel, threadTs } = o;
  const stream = await o.store.get<string>(streamKey(key));
  const openingTs = key.id.split("/").at(-1) ?? "";
  const messages = threadTs
    ? await out.replies(channel, threadTs, openingTs)
    : await out.history(channel, openingTs);
  const draft = (m: ReplyMessage): boolean => {
    if (m.metadata?.event_type === o.answerEvent) return false;
    if (m.ts === stream) return true;
    return m.metadata?.event_type === DRAFT_EVENT && m.metadata.event_payload?.key === key.id;
  };
  // A streaming message is removed as it is: chat.delete ends it too.
  for (const m of messages.filter((x) => x.ts > openingTs && draft(x))) await out.delete(channel, m.ts);
}
