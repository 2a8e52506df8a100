/**
 * The Reporter on Slack: Say = new message(s) in the thread (mrkdwn, split; a markdown block when
 * the answer has a table: answer-render.ts), Status = a StatusSink,
 * Notice = a visible context message, Draft = the answer as it is written (`draft.ts`; a resumed
 * turn's answer is not streamed: what of it is posted already is only known when it is said). The status episode ends when an answer is said, and its
 * message is removed once the answer is posted (in the background: the turn does not wait for it).
 * An answer with a key carries it as message metadata; a resumed turn posts only the parts of its
 * answer that are not in the conversation yet, and uploads only the answer's files (answer.md) Neo
 * has not shared there since the turn's opening message: a file share carries no metadata. A
 * draft a dead process never finished is found and removed when its turn resumes (`unfinished.ts`).
 */

import { z } from "zod";
import { parseUserKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { AnswerKey, OutboundFile, Reporter } from "../../core/reporter.js";
import type { Store } from "../../store/types.js";
import { renderAnswer } from "./answer-render.js";
import type { DraftPace } from "./draft/pacer.js";
import { createSlackDraft } from "./draft.js";
import { markdownToMrkdwn } from "./mrkdwn.js";
import type { ReplyMessage } from "./outbound/lookups.js";
import type { MessageMetadata } from "./outbound/messages.js";
import type { SlackOutbound } from "./outbound.js";
import { splitMrkdwn } from "./split.js";
import type { StatusSink } from "./status.js";
import { draftMetadata, dropUnfinishedDraft, recordStream } from "./unfinished.js";
import type { SlackIdentity } from "./workspaces.js";

/** Context block elements hold at most 3,000 characters. */
const NOTICE_PART = 2900;

export interface SlackReporterOptions {
  out: SlackOutbound;
  channel: string;
  threadTs: string;
  status: StatusSink;
  pace: DraftPace;
  /** Who Neo is in this workspace: a resumed answer's files are looked for among its own messages. */
  me: () => Promise<SlackIdentity | undefined>;
  /** Where a streaming answer's message is noted, for a resumed turn to find (`unfinished.ts`). */
  store: Store;
}

/** The metadata an answer's parts are posted with, so a resumed turn can see what is there. */
export const ANSWER_EVENT = "neo_answer";

function answerMetadata(key: AnswerKey, part: number): MessageMetadata {
  return { event_type: ANSWER_EVENT, event_payload: { key: key.id, part } };
}

export function createSlackReporter(o: SlackReporterOptions): Reporter {
  const { out, channel, threadTs } = o;

  /** Parts of the answer named `id` already in the thread (or, outside threads, after its message). */
  const postedParts = async (id: string): Promise<Set<number>> => {
    const openingTs = id.split("/").at(-1);
    const messages = threadTs ? await out.replies(channel, threadTs) : await out.history(channel, openingTs);
    const parts = new Set<number>();
    for (const m of messages) {
      const p = m.metadata?.event_type === ANSWER_EVENT ? m.metadata.event_payload : undefined;
      if (p?.key === id && typeof p.part === "number") parts.add(p.part);
    }
    return parts;
  };

  /** Names of the files Neo shared after the opening message of the answer named `id`, one per share. */
  const sharedFiles = async (id: string): Promise<string[]> => {
    const openingTs = id.split("/").at(-1) ?? "";
    const me = await o.me();
    if (!me) throw new Error("Neo's identity in this workspace is unknown");
    const messages = threadTs
      ? await out.replies(channel, threadTs, openingTs)
      : await out.history(channel, openingTs);
    // Slack ts strings sort as the times they name (seconds and microseconds, fixed width).
    return messages
      .filter((m) => m.ts > openingTs && byNeo(m, me))
      .flatMap((m) => (m.files ?? []).flatMap((f) => fileName.safeParse(f).data?.name ?? []));
  };

  /** Of `files`, those not shared yet (matched by name, one shared file per file). */
  const notShared = async (files: readonly OutboundFile[], id: string): Promise<readonly OutboundFile[]> => {
    const there = await sharedFiles(id).catch((err: unknown): string[] => {
      log.warn(
        { err, channel },
        "slack: could not see which of a resumed answer's files are shared; uploading them",
      );
      return [];
    });
    return files.filter((f) => {
      const i = there.indexOf(f.name);
      if (i >= 0) there.splice(i, 1);
      return i < 0;
    });
  };

  const reporter: Reporter = {
    say: async (text, key) => {
      const parts = renderAnswer(text);
      const removeStatus = o.status.stop();
      try {
        // Slack has no idempotency key for chat.postMessage: a resumed turn looks before posting.
        const posted = key?.resumed
          ? await postedParts(key.id).catch((err: unknown) => {
              log.warn(
                { err, channel },
                "slack: could not see what of a resumed answer was posted; posting it all",
              );
              return new Set<number>();
            })
          : new Set<number>();
        for (const [i, part] of parts.entries()) {
          if (posted.has(i)) continue;
          await out.post({
            channel,
            thread_ts: threadTs,
            ...part,
            ...(key ? { metadata: answerMetadata(key, i) } : {}),
          });
        }
      } finally {
        // Not awaited: chat.delete is Tier 3 (~50/min), and a burst of answers waiting on it held
        // their turns' slots (8 at a time answered 4.4 messages/s). A failed removal is logged.
        void removeStatus().catch((err: unknown) =>
          log.warn({ err, channel }, "slack status removal failed"),
        );
      }
    },
    status: async (text) => {
      o.status.show(text);
    },
    upload: async (files, comment, key) => {
      // completeUploadExternal takes no metadata and no idempotency key: a resumed turn looks first.
      const todo = key?.resumed ? await notShared(files, key.id) : files;
      if (todo.length > 0) await out.upload(channel, threadTs, todo, markdownToMrkdwn(comment));
    },
    notice: async (text) => {
      for (const part of splitMrkdwn(markdownToMrkdwn(text), NOTICE_PART)) {
        await out.post({
          channel,
          thread_ts: threadTs,
          text: part,
          blocks: [{ type: "context", elements: [{ type: "mrkdwn", text: part }] }],
        });
      }
    },
    draft: ({ requester, key }) => {
      if (key?.resumed)
        return { update: () => {}, finish: (text) => reporter.say(text, key), discard: async () => {} };
      const who = parseUserKey(requester);
      return createSlackDraft({
        out,
        channel,
        threadTs,
        recipient: { user: who.user, team: who.workspace },
        pace: o.pace,
        status: o.status,
        ...(key
          ? {
              metadata: (part: number) => answerMetadata(key, part),
              draftMetadata: draftMetadata(key),
              streamed: (ts: string) => recordStream(o.store, key, channel, ts),
            }
          : {}),
        say: (text) => reporter.say(text, key),
        answerSoon: () => reporter.answerSoon?.(),
      });
    },
    answerSoon: () => out.postSoon(channel),
    dropUnfinished: (key) =>
      dropUnfinishedDraft({ out, store: o.store, channel, threadTs, answerEvent: ANSWER_EVENT }, key),
  };
  return reporter;
}

/** A shared file's name as conversations.replies / history list it (Slack's `File` object). */
const fileName = z.object({ name: z.string() });

const byNeo = (m: ReplyMessage, me: SlackIdentity): boolean =>
  m.user === me.botUserId || (me.botId !== undefined && m.bot_id === me.botId);
