/**
 * The Reporter for message-triggered turns in a thread or DM: typing kept alive while the turn runs
 * (from a second in: an answer ready sooner is posted alone, see `typing.ts`), one status line
 * created a second after the first `status` (likewise: none for a turn done sooner) with the latest
 * text and edited in place (coalesced) after that, removed when the answer lands; `say` posts new messages split at 2,000 characters (nonces derived from the
 * answer's key, so posting it again shows nothing new; a resumed answer first looks at what is there,
 * see `posted.ts`, as a nonce holds only minutes and a draft's messages carry none); `notice` posts a visible
 * message. The status line's id is kept in the store so an instance that resumes the turn after a
 * restart removes a line the previous one left behind. `draft` shows the answer as it is written
 * (see `draft.ts`): typing stops when its text appears, the status line goes when it is finished.
 * `upload` posts files as message attachments (see `upload.ts`). A draft a dead process never
 * finished is found and removed when its turn resumes (`unfinished.ts`).
 */
import { type REST, Routes } from "discord.js";
import { type ConversationKey, hashTag } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { AnswerKey, Reporter } from "../../core/reporter.js";
import type { Store } from "../../store/types.js";
import type { EditCoalescer, Pacer } from "./coalesce.js";
import { createDiscordDraft } from "./draft.js";
import { notAmong, type Posted, postedAfter } from "./posted.js";
import { createBody, editBody, nonceFor, statusLine } from "./render.js";
import { splitMessage } from "./split.js";
import { stopRow } from "./stop-button.js";
import { createTyping, type Typing, type TypingOptions } from "./typing.js";
import { dropUnfinishedDraft, recordDraft } from "./unfinished.js";
import { uploadJob } from "./upload.js";

const STATUS_TTL_MS = 24 * 60 * 60 * 1000;

export interface MessageReporter extends Reporter {
  /** The turn is about to run (a message was taken): type unless the answer shows within the delay. */
  begin(): void;
  /** The message was not taken after all (duplicate): stop typing. */
  end(): void;
  /** The turn was stopped by a click: stop typing, remove the status line. */
  stopped(): Promise<void>;
}

export interface MessageReporterDeps {
  rest: REST;
  store: Store;
  edits: EditCoalescer;
  /** Paces answer drafts per channel. */
  drafts: Pacer;
  conversation: ConversationKey;
  /** The thread or DM channel the conversation posts in. */
  channelId: string;
  /** Neo's user id (a resumed answer looks for its own messages). */
  neoId: () => Promise<string>;
  typing?: TypingOptions;
}

interface StatusRef {
  channelId: string;
  messageId: string;
}

export function createMessageReporter(d: MessageReporterDeps): MessageReporter {
  const { rest, store, edits, channelId } = d;
  const statusKey = `discord:status:${hashTag(d.conversation)}`;
  const typing: Typing = createTyping(
    () => rest.post(Routes.channelTyping(channelId)).then(() => undefined),
    d.typing,
  );
  let statusId: Promise<string | undefined> | null = null;
  /** The first status waits as typing does (a second by default): a turn done sooner shows none. */
  const statusDelayMs = d.typing?.delayMs ?? 1000;
  let statusTimer: NodeJS.Timeout | null = null;
  let statusText = "";

  const post = async (content: string, nonce?: string): Promise<string> => {
    const msg = (await rest.post(Routes.channelMessages(channelId), {
      body: createBody({ content }, nonce),
    })) as { id: string };
    return msg.id;
  };

  const placeStatus = (): void => {
    statusId = post(statusLine(statusText)).then(
      async (id) => {
        await store
          .set<StatusRef>(statusKey, { channelId, messageId: id }, STATUS_TTL_MS)
          .catch(() => undefined);
        return id;
      },
      (err: unknown) => {
        log.warn({ err, conversation: d.conversation }, "discord status line could not be posted");
        return undefined;
      },
    );
  };

  const removeStatus = async (): Promise<void> => {
    if (statusTimer) clearTimeout(statusTimer);
    statusTimer = null;
    const pending = statusId;
    statusId = null;
    const id = pending
      ? await pending
      : (await store.get<StatusRef>(statusKey).catch(() => undefined))?.messageId;
    if (!id) return;
    await edits.cancel(`${channelId}/${id}`);
    await rest
      .delete(Routes.channelMessage(channelId, id))
      .catch((err: unknown) => log.debug({ err, conversation: d.conversation }, "status line already gone"));
    await store.delete(statusKey).catch(() => false);
  };

  /** What a resumed answer left in the channel; nothing known (post it all) when it cannot be read. */
  const posted = async (key: AnswerKey): Promise<Posted> =>
    postedAfter(rest, channelId, key.id, await d.neoId()).catch((err: unknown) => {
      log.warn(
        { err, channelId },
        "discord: could not see what of a resumed answer was posted; posting it all",
      );
      return { texts: [], files: [] };
    });

  /** With a `key`, each chunk's nonce is derived from it, so posting the same answer again shows nothing new. */
  const postAll = async (text: string, key?: AnswerKey): Promise<void> => {
    const chunks = [...splitMessage(text).entries()];
    const todo = key?.resumed ? notAmong(chunks, (await posted(key)).texts, ([, c]) => c) : chunks;
    for (const [i, chunk] of todo) {
      await post(chunk, key === undefined ? undefined : nonceFor(`${d.conversation}|${key.id}|${i}`));
    }
  };

  const clearProgress = async (): Promise<void> => {
    typing.stop();
    await removeStatus();
  };

  return {
    begin: () => typing.start(),
    end: () => typing.stop(),
    stopped: clearProgress,
    async status(text) {
      typing.start();
      statusText = text;
      if (statusId) {
        const id = await statusId;
        if (id) edits.push(`${channelId}/${id}`, statusLine(text));
        return;
      }
      if (statusTimer) return;
      statusTimer = setTimeout(() => {
        statusTimer = null;
        placeStatus();
      }, statusDelayMs);
      statusTimer.unref();
    },
    async say(text, key) {
      // The answer is on its way: a typing call now would only queue beside it.
      typing.stop();
      try {
        await postAll(text, key);
      } finally {
        await clearProgress();
      }
    },
    async notice(text) {
      await postAll(text);
    },
    // In the channel's paced turn, like the answer's edits; a refusal throws to the caller.
    async upload(all, comment, key) {
      const files = key?.resumed ? notAmong(all, (await posted(key)).files, (f) => f.name) : all;
      if (files.length === 0) return;
      await d.drafts.send(
        channelId,
        uploadJob(
          files,
          comment,
          (body, parts) =>
            rest.post(Routes.channelMessages(channelId), { body, files: parts }).then(() => undefined),
          key ? (i) => nonceFor(`${d.conversation}|${key.id}|file|${i}`) : undefined,
        ),
      );
    },
    draft: ({ requester, key }) => {
      let recorded = false;
      return createDiscordDraft({
        pacer: d.drafts,
        channelId,
        stopRow: stopRow(requester, d.conversation),
        target: {
          post: async (content, components) => {
            const m = (await rest.post(Routes.channelMessages(channelId), {
              body: createBody({ content, components }),
            })) as { id: string };
            if (key && !recorded) {
              recorded = true;
              await recordDraft(store, d.conversation, key, m.id);
            }
            return m.id;
          },
          edit: async (id, content, components) => {
            await rest.patch(Routes.channelMessage(channelId, id), {
              body: editBody({ content, components }),
            });
          },
          remove: async (id) => {
            await rest.delete(Routes.channelMessage(channelId, id));
          },
        },
        onFirstText: () => typing.stop(),
        onEnd: async (finished) => {
          if (finished) await clearProgress();
          else typing.start();
        },
      });
    },
    dropUnfinished: async (key) =>
      dropUnfinishedDraft(
        { rest, store, conversation: d.conversation, channelId, neoId: await d.neoId() },
        key,
      ),
  };
}

/** Send a coalesced status edit (`key` is `channel/message`). */
export function statusEditSender(rest: REST): (key: string, content: string) => Promise<void> {
  return async (key, content) => {
    const [channelId, messageId] = key.split("/") as [string, string];
    await rest.patch(Routes.channelMessage(channelId, messageId), { body: editBody({ content }) });
  };
}
