/**
 * Inbound messages: classify, open or join the thread, gather context, journal through
 * `conversations.submit` (keyed by the message id, so a redelivery after a gateway resume or a
 * restart is dropped as a duplicate), then show typing. Ignored messages leave a debug line why.
 */
import { ChannelType, DiscordAPIError, type Message, RESTJSONErrorCodes } from "discord.js";
import type { AccessPolicy } from "../../core/access/policy.js";
import { type ChannelSettingsStore, channelGate } from "../../core/channels/index.js";
import { countIgnored } from "../../core/conversations/observe.js";
import type { Conversations, InboundMessage } from "../../core/conversations/types.js";
import { type ConversationKey, channelKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import type { Backfill } from "./backfill.js";
import { gatherContext, speakerName } from "./context.js";
import { discordFilesOf } from "./files.js";
import { type ChannelKind, classify, threadName } from "./inbound.js";
import { discordUser, dmConversation, postChannelOf, threadConversation } from "./keys.js";
import type { MessageReporter } from "./message-reporter.js";
import { placeOf } from "./place.js";
import { isForward, renderDiscordContent } from "./readable.js";

/** Threads Neo holds a conversation in; shared by every shard and instance through the store. */
export const threadMarkKey = (threadId: string): string => `discord:thread:${threadId}`;
const THREAD_MARK_TTL_MS = 90 * 24 * 60 * 60 * 1000;

export interface MessageHandlerDeps {
  store: Store;
  conversations: Pick<Conversations, "submit" | "threadReach">;
  access: Pick<AccessPolicy, "isAllowed">;
  reporter: (conversation: ConversationKey) => MessageReporter;
  neoId: () => string;
  /** A message in Neo's thread arrived with no content: the Message Content intent is missing. */
  onEmptyContent: () => void;
  /** Where a catch-up after a restart starts (see `backfill.ts`). */
  catchUp: Pick<Backfill, "begin" | "done">;
  /** Bot user ids answered like people (`NEO_ANSWER_BOTS`). */
  answerBots: ReadonlySet<string>;
  /** Per-channel settings: the gate decides whether a guild message is answered. */
  channels: Pick<ChannelSettingsStore, "get">;
}

function kindOf(message: Message): ChannelKind {
  const ch = message.channel;
  if (ch.type === ChannelType.DM) return "dm";
  if (ch.type === ChannelType.PublicThread || ch.type === ChannelType.PrivateThread) return "thread";
  if (ch.type === ChannelType.GuildText || ch.type === ChannelType.GuildAnnouncement) return "text";
  return "other";
}

/** Start a public thread on the message; a second attempt (redelivery) finds the first one. */
async function openThread(message: Message, name: string): Promise<string> {
  try {
    const thread = await message.startThread({ name, autoArchiveDuration: 1440 });
    return thread.id;
  } catch (err) {
    // Discord gives a thread started from a message that message's id.
    if (err instanceof DiscordAPIError && err.code === RESTJSONErrorCodes.ThreadAlreadyCreatedForMessage) {
      return message.id;
    }
    throw err;
  }
}

export function createMessageHandler(d: MessageHandlerDeps): (message: Message) => Promise<void> {
  const ignore = (message: Message, reason: string): void => {
    countIgnored("discord");
    log.debug(
      { messageId: message.id, channelId: message.channelId, reason },
      `discord: ignored message (${reason})`,
    );
  };

  const handle = async (message: Message): Promise<void> => {
    const neoId = d.neoId();
    const kind = kindOf(message);
    const mentionsNeo = message.mentions.users.has(neoId);
    // Threads Neo opened are its conversations by ownership (no store read, and it survives a store
    // that lost its data); threads it joined by mention are marked in the store.
    const ownedByNeo = message.channel.isThread() && message.channel.ownerId === neoId;
    const knownThread =
      kind === "thread" &&
      (ownedByNeo || (await d.store.get<number>(threadMarkKey(message.channelId))) !== undefined);
    // The channel's settings (a thread's are its parent's): off = no answer; mention optional.
    let mentionOptional = false;
    if (kind !== "dm" && message.guildId) {
      const ch = message.channel;
      const parentId = ch.isThread() ? (ch.parentId ?? message.channelId) : message.channelId;
      const settings = await d.channels.get(
        channelKey({ platform: "discord", workspace: message.guildId, channel: parentId }),
      );
      const verdict = channelGate(settings, { dm: false, mentioned: mentionsNeo, followUp: knownThread });
      if (!verdict.answer && !settings.enabled) {
        ignore(message, verdict.reason);
        return;
      }
      mentionOptional = verdict.answer && !mentionsNeo && !knownThread;
    }
    const route = classify({
      mentionOptional,
      authorIsNeo: message.author.id === neoId,
      authorIsBot: message.author.bot,
      authorIsAllowedBot: d.answerBots.has(message.author.id),
      system: message.system || message.webhookId !== null,
      kind,
      mentionsNeo,
      knownThread,
      content: message.content,
      hasFilesOrForward: message.attachments.size > 0 || isForward(message),
    });
    if (route.action === "ignore") {
      if (route.emptyContent && message.attachments.size === 0) d.onEmptyContent();
      ignore(message, route.reason);
      return;
    }
    const speaker = {
      userKey: discordUser(message.guildId, message.author.id),
      displayName: speakerName(message),
    };
    if (!(await d.access.isAllowed(speaker.userKey))) {
      ignore(message, "author is denied by an admin");
      return;
    }
    // Names, dates and forwarded messages made readable; Neo's own mention dropped.
    const text = await renderDiscordContent(message, neoId);
    let conversation: ConversationKey;
    let context: string[] = [];
    if (route.action === "dm") {
      conversation = dmConversation(message.channelId);
    } else if (route.action === "open-thread") {
      const threadId = await openThread(message, threadName(text, speaker.displayName));
      await d.store.set(threadMarkKey(threadId), Date.now(), THREAD_MARK_TTL_MS);
      conversation = threadConversation(message.guildId!, message.channelId, threadId);
      context = await gatherContext(message, false, neoId);
    } else {
      const ch = message.channel;
      const parentId = ch.isThread() ? (ch.parentId ?? message.channelId) : message.channelId;
      conversation = threadConversation(message.guildId!, parentId, message.channelId);
      if (route.join) {
        await d.store.set(threadMarkKey(message.channelId), Date.now(), THREAD_MARK_TTL_MS);
        context = await gatherContext(
          message,
          true,
          neoId,
          (await d.conversations.threadReach(conversation)).seen,
        );
      }
    }
    const files = discordFilesOf(message.attachments.values(), message.channelId);
    const inbound: InboundMessage = {
      id: message.id,
      conversation,
      speaker,
      text: text || (files.length ? "" : "(no text)"),
      ...(files.length ? { files } : {}),
      shared: route.action !== "dm",
      // Of the channel the mention came from: the thread Neo opens on it is as public as it is.
      place: placeOf(message.channel, message.guildId),
      ...(context.length ? { context } : {}),
      position: message.id,
      receivedAt: message.createdTimestamp,
    };
    const reporter = d.reporter(conversation);
    reporter.begin();
    // Accepted and duplicate are counted and logged by the conversations layer.
    const result = await d.conversations.submit(inbound);
    // Journaled (or already): the catch-up of this channel, and of a thread it opened, starts after it.
    if (result.accepted || result.reason === "duplicate")
      await d.catchUp.done(message, true, postChannelOf(conversation));
    if (!result.accepted) {
      reporter.end();
      if (result.reason === "shutting_down")
        log.debug({ messageId: message.id }, "discord: not taken, shutting down");
    }
  };

  return async (message) => {
    d.catchUp.begin(message);
    try {
      await handle(message);
    } finally {
      // Not a no-op after `done(…, true)`: it only drops the message from the in-flight set.
      await d.catchUp.done(message, false);
    }
  };
}
