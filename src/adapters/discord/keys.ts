/**
 * Discord ↔ Neo keys. Conversation `discord:<guild|@me>:<channel>:<thread>`: a guild thread is
 * `guild:parent:thread`, a DM is `@me:dm:dm`. User `discord:<guild|@me>:<user>`, so a person's cortex
 * is per guild (communities do not share what Neo remembers), and DMs have their own.
 */
import {
  type ConversationKey,
  conversationKey,
  parseConversationKey,
  type UserKey,
  userKey,
} from "../../core/keys.js";

/** Workspace part for DMs (Discord's own name for the DM "guild"). */
export const DM_WORKSPACE = "@me";

export function threadConversation(guildId: string, parentId: string, threadId: string): ConversationKey {
  return conversationKey({ platform: "discord", workspace: guildId, channel: parentId, thread: threadId });
}

export function dmConversation(channelId: string): ConversationKey {
  return conversationKey({
    platform: "discord",
    workspace: DM_WORKSPACE,
    channel: channelId,
    thread: channelId,
  });
}

export function discordUser(guildId: string | null, userId: string): UserKey {
  return userKey({ platform: "discord", workspace: guildId ?? DM_WORKSPACE, user: userId });
}

export class DiscordKeyError extends Error {
  readonly code = "DISCORD_BAD_KEY";
}

/** Where a conversation's messages go: the thread (or DM channel) id. */
export function postChannelOf(conversation: ConversationKey): string {
  const parts = parseConversationKey(conversation);
  if (parts.platform !== "discord") throw new DiscordKeyError(`not a Discord conversation: ${conversation}`);
  return parts.thread;
}
