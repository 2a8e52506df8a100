/**
 * The fake REST API's message book: messages per channel, create (honouring nonce + enforce_nonce),
 * edit, delete, and an interaction's original response. Plus the reply helpers the routes use.
 */
import { type MessagePayload, snowflake } from "./payloads.js";
import type { RestState } from "./rest.js";

export type Handler = (
  m: RegExpMatchArray,
  body: Record<string, unknown>,
  q: Record<string, string>,
) => Reply;
export interface Reply {
  status: number;
  json?: unknown;
}

export const ok = (json: unknown): Reply => ({ status: 200, json });
export const noContent: Reply = { status: 204 };
/** Discord's 404: "Unknown <what>" with its JSON error code (10003 Unknown Channel by default). */
export const notFound = (what: string, code = 10003): Reply => ({
  status: 404,
  json: { message: `Unknown ${what}`, code },
});

/**
 * Add a message to its channel's history and make it the channel's `last_message_id`, which Discord
 * keeps on every channel and thread object (GUILD_CREATE lists them with it; "the id of the last
 * message sent in this channel", https://discord.com/developers/docs/resources/channel#channel-object).
 */
export function keepMessage(
  state: Pick<RestState, "messages" | "channels">,
  channelId: string,
  msg: MessagePayload,
): void {
  const list = state.messages.get(channelId) ?? [];
  list.push(msg);
  state.messages.set(channelId, list);
  const channel = state.channels.get(channelId);
  if (channel) channel.last_message_id = msg.id;
}

export function createMessageBook(state: RestState) {
  const msgs = (channelId: string): MessagePayload[] => {
    let list = state.messages.get(channelId);
    if (!list) {
      list = [];
      state.messages.set(channelId, list);
    }
    return list;
  };

  const createMessage = (
    channelId: string,
    body: Record<string, unknown>,
    webhook = false,
    attachments: Array<Record<string, unknown>> = [],
  ): MessagePayload => {
    const nonce = body.nonce as string | undefined;
    if (nonce && body.enforce_nonce) {
      const existing = msgs(channelId).find((m) => m.nonce === nonce);
      if (existing) return existing;
    }
    const msg: MessagePayload = {
      id: snowflake(),
      channel_id: channelId,
      author: state.bot,
      content: (body.content as string | undefined) ?? "",
      embeds: (body.embeds as unknown[]) ?? [],
      components: (body.components as unknown[]) ?? [],
      flags: (body.flags as number | undefined) ?? 0,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments,
      pinned: false,
      type: 0,
      ...(nonce ? { nonce } : {}),
      ...(webhook ? { webhook_id: state.appId, application_id: state.appId } : {}),
    };
    keepMessage(state, channelId, msg);
    recordUploads(channelId, msg.id, attachments);
    return msg;
  };

  /** Files the bot attached to a message, with their bytes, in `state.uploads`. */
  const recordUploads = (
    channelId: string,
    messageId: string,
    attachments: Array<Record<string, unknown>>,
  ) => {
    for (const a of attachments) {
      const file = state.cdn.get(decodeURIComponent(new URL(String(a.url)).pathname));
      state.uploads.push({
        channelId,
        messageId,
        filename: String(a.filename),
        contentType: String(a.content_type),
        bytes: file?.body ?? Buffer.alloc(0),
      });
    }
  };

  const editMessage = (channelId: string, id: string, body: Record<string, unknown>): Reply => {
    const msg = msgs(channelId).find((m) => m.id === id);
    if (!msg) return notFound("Message");
    for (const k of ["content", "embeds", "components", "flags"]) if (k in body) msg[k] = body[k];
    msg.edited_timestamp = new Date().toISOString();
    return ok(msg);
  };

  const deleteMessage = (channelId: string, id: string): Reply => {
    const list = msgs(channelId);
    const i = list.findIndex((m) => m.id === id);
    if (i < 0) return notFound("Message");
    list.splice(i, 1);
    return noContent;
  };

  /** An interaction's original response; for a component interaction, the message it is on. */
  const original = (token: string): { channelId: string; msg: MessagePayload | undefined } => {
    const channelId = state.interactionChannels.get(token) ?? "";
    const own = msgs(channelId).find((m) => m.interaction_token === token && m.original);
    const clicked = state.componentMessages.get(token);
    return { channelId, msg: own ?? msgs(channelId).find((m) => m.id === clicked) };
  };

  return { msgs, createMessage, editMessage, deleteMessage, original, recordUploads };
}
