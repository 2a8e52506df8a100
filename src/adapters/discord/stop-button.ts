/**
 * The Stop button on an answer being written. Its `custom_id` names the requester and the
 * conversation's parent channel (the thread or DM is the channel the click comes from), so any
 * instance can act on a click: `neo:stop:<requester id>:<parent channel>`, at most 50 characters.
 */
import { type APIActionRowComponent, type APIButtonComponent, ButtonStyle, ComponentType } from "discord.js";
import {
  type ConversationKey,
  conversationKey,
  parseConversationKey,
  parseUserKey,
  type UserKey,
} from "../../core/keys.js";
import { DM_WORKSPACE } from "./keys.js";

const PREFIX = "neo:stop:";

export interface StopTarget {
  requesterId: string;
  conversation: ConversationKey;
}

export type StopRow = APIActionRowComponent<APIButtonComponent>;

/** The action row with the Stop button for a turn run for `requester` in `conversation`. */
export function stopRow(requester: UserKey, conversation: ConversationKey): StopRow {
  const requesterId = parseUserKey(requester).user;
  const parent = parseConversationKey(conversation).channel;
  return {
    type: ComponentType.ActionRow,
    components: [
      {
        type: ComponentType.Button,
        style: ButtonStyle.Secondary,
        label: "Stop",
        custom_id: `${PREFIX}${requesterId}:${parent}`,
      },
    ],
  };
}

/** Whether a button's custom id is a Stop button's. */
export function isStopCustomId(customId: string): boolean {
  return customId.startsWith(PREFIX);
}

/** The click's target, or null when the custom id is not a Stop button's. */
export function parseStopCustomId(
  customId: string,
  guildId: string | null,
  channelId: string,
): StopTarget | null {
  const m = customId.match(/^neo:stop:(\d+):(\w+)$/);
  if (!m) return null;
  return {
    requesterId: m[1]!,
    conversation: conversationKey({
      platform: "discord",
      workspace: guildId ?? DM_WORKSPACE,
      channel: m[2]!,
      thread: channelId,
    }),
  };
}
