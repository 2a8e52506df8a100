/** What Neo reads back from Slack: who a user is, who may read a channel, a thread's or channel's messages. */
import type { CallOptions, OutboundContext } from "./context.js";
import type { MessageMetadata } from "./messages.js";

export interface UserInfo {
  id: string;
  displayName: string;
  isAdmin: boolean;
  isBot: boolean;
}

/** The user object `users.info` and `user_change` carry (https://api.slack.com/types/user). */
export interface SlackUserObject {
  name?: string;
  real_name?: string;
  profile?: { display_name?: string; real_name?: string };
  is_admin?: boolean;
  is_owner?: boolean;
  is_primary_owner?: boolean;
  is_bot?: boolean;
}

export function userInfoOf(id: string, u: SlackUserObject | undefined): UserInfo {
  return {
    id,
    displayName: u?.profile?.display_name || u?.real_name || u?.profile?.real_name || u?.name || id,
    isAdmin: Boolean(u?.is_admin || u?.is_owner || u?.is_primary_owner),
    isBot: Boolean(u?.is_bot),
  };
}

/** What `conversations.info` says about who can read a conversation. */
export interface ChannelInfo {
  name: string;
  isIm: boolean;
  isMpim: boolean;
  isPrivate: boolean;
}

/** Pages of `conversations.replies` read for one thread at most (a longer thread keeps its start). */
export const REPLIES_PAGES = 5;

export interface ReplyMessage {
  ts: string;
  metadata?: MessageMetadata;
  user?: string;
  bot_id?: string;
  subtype?: string;
  text?: string;
  files?: unknown[];
  attachments?: unknown[];
}

export interface SlackLookups {
  /** What `users.info` says of a user; undefined when the call was dropped (`optional`: no room now). */
  usersInfo(user: string, opts?: CallOptions): Promise<UserInfo | undefined>;
  /**
   * What `conversations.info` says of a channel: its name (a DM's is its id) and who may read it;
   * undefined when the call was dropped (`optional`: no room now).
   */
  channelInfo(channel: string, opts?: CallOptions): Promise<ChannelInfo | undefined>;
  /**
   * A thread's messages, oldest first (all pages, at most REPLIES_PAGES); with `oldest`, only those
   * after it (Slack's `oldest`, exclusive) and the thread's parent. Metadata included.
   */
  replies(channel: string, ts: string, oldest?: string): Promise<ReplyMessage[]>;
  /** A channel's top-level messages after `oldest` (first page, newest first), metadata included. */
  history(channel: string, oldest?: string): Promise<ReplyMessage[]>;
}

export function createLookups({ client, rules, token, gated }: OutboundContext): SlackLookups {
  return {
    usersInfo: async (user, opts) => {
      const res = await gated(
        "users.info",
        rules.usersInfo,
        async () => client.users.info({ user, token: await token() }),
        opts,
      );
      return res && userInfoOf(user, res.user);
    },
    channelInfo: async (channel, opts) => {
      const res = await gated(
        "conversations.info",
        rules.conversationsInfo,
        async () => client.conversations.info({ channel, token: await token() }),
        opts,
      );
      if (!res) return undefined;
      const c = res.channel;
      return {
        name: c?.name ?? channel,
        isIm: Boolean(c?.is_im),
        isMpim: Boolean(c?.is_mpim),
        isPrivate: Boolean(c?.is_private),
      };
    },
    replies: async (channel, ts, oldest) => {
      const out: ReplyMessage[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < REPLIES_PAGES; page++) {
        const res = await gated("conversations.replies", rules.replies, async () =>
          client.conversations.replies({
            channel,
            ts,
            limit: 200,
            include_all_metadata: true,
            ...(oldest ? { oldest } : {}),
            ...(cursor ? { cursor } : {}),
            token: await token(),
          }),
        );
        out.push(...((res?.messages ?? []) as ReplyMessage[]));
        cursor = res?.response_metadata?.next_cursor || undefined;
        if (!res?.has_more || !cursor) break;
      }
      return out;
    },
    history: async (channel, oldest) => {
      const res = await gated("conversations.history", rules.history, async () =>
        client.conversations.history({
          channel,
          limit: 100,
          include_all_metadata: true,
          ...(oldest ? { oldest } : {}),
          token: await token(),
        }),
      );
      return (res?.messages ?? []) as ReplyMessage[];
    },
  };
}
