/**
 * Every Web API call Neo makes, each routed through the rate gate under the method's Slack tier.
 * Posts never @-mention anyone: `link_names` off, `parse: "none"`, and text already escaped.
 */
import type { webApi } from "@slack/bolt";

type WebClient = webApi.WebClient;

import { createRateGate, type RateGate, type RateRule } from "./rate-gate.js";

/** Slack's published tiers for the methods Neo uses (per workspace unless noted). */
export interface SlackRateRules {
  /** `chat.postMessage`: about one per second per channel, short bursts allowed. */
  postPerChannel: RateRule;
  /** `chat.update`: Tier 3, ~50/min. */
  update: RateRule;
  /** `chat.delete`: Tier 3. */
  delete: RateRule;
  /** `chat.postEphemeral`: Tier 4, ~100/min. */
  ephemeral: RateRule;
  /** `users.info`: Tier 4. */
  usersInfo: RateRule;
  /** `conversations.replies`: Tier 3. */
  replies: RateRule;
  /** `conversations.history`: Tier 3. */
  history: RateRule;
  /** `reactions.add`: Tier 3. */
  reactions: RateRule;
}

export const SLACK_RATE_RULES: SlackRateRules = {
  // One a second on average, with the short burst Slack grants: a status line and the answer right
  // after it would otherwise hold the answer back a whole second.
  postPerChannel: { limit: 3, windowMs: 3000 },
  update: { limit: 50, windowMs: 60_000 },
  delete: { limit: 50, windowMs: 60_000 },
  ephemeral: { limit: 100, windowMs: 60_000 },
  usersInfo: { limit: 100, windowMs: 60_000 },
  replies: { limit: 50, windowMs: 60_000 },
  history: { limit: 50, windowMs: 60_000 },
  reactions: { limit: 50, windowMs: 60_000 },
};

/** Slack message metadata (`chat.postMessage`), read back with `include_all_metadata`. */
export interface MessageMetadata {
  event_type: string;
  event_payload?: Record<string, unknown>;
}

export interface PostArgs {
  channel: string;
  thread_ts?: string;
  text: string;
  blocks?: unknown[];
  metadata?: MessageMetadata;
}

export interface UserInfo {
  id: string;
  displayName: string;
  isAdmin: boolean;
  isBot: boolean;
}

export interface ReplyMessage {
  ts: string;
  metadata?: MessageMetadata;
  user?: string;
  bot_id?: string;
  subtype?: string;
  text?: string;
}

export interface SlackOutbound {
  /** Resolves with the new message's ts, or undefined when `skip` dropped it. */
  post(args: PostArgs, skip?: () => boolean): Promise<string | undefined>;
  /** `content` is read when the call leaves the queue, so a queued edit always sends the latest text. */
  update(
    channel: string,
    ts: string,
    content: () => { text: string; blocks?: unknown[] },
    skip?: () => boolean,
  ): Promise<void>;
  delete(channel: string, ts: string): Promise<void>;
  ephemeral(args: {
    channel: string;
    user: string;
    text: string;
    thread_ts?: string;
    blocks?: unknown[];
  }): Promise<void>;
  usersInfo(user: string): Promise<UserInfo>;
  /** A thread's messages (first page), metadata included. */
  replies(channel: string, ts: string): Promise<ReplyMessage[]>;
  /** A channel's top-level messages after `oldest` (first page, newest first), metadata included. */
  history(channel: string, oldest?: string): Promise<ReplyMessage[]>;
  react(channel: string, ts: string, name: string): Promise<void>;
  /** Calls queued or in flight. */
  pending(): number;
  /** Resolves once no call is queued or in flight. */
  drained(): Promise<void>;
}

const QUIET = { link_names: false, parse: "none", unfurl_links: false, unfurl_media: false } as const;

export function createSlackOutbound(
  client: WebClient,
  rules: SlackRateRules = SLACK_RATE_RULES,
): SlackOutbound {
  const gate: RateGate = createRateGate();
  return {
    post: async (args, skip) => {
      const res = await gate.run({
        key: `chat.postMessage:${args.channel}`,
        rule: rules.postPerChannel,
        skip,
        call: () => {
          const { thread_ts, ...rest } = args;
          return client.chat.postMessage({
            ...QUIET,
            ...rest,
            ...(thread_ts ? { thread_ts } : {}),
          } as Parameters<WebClient["chat"]["postMessage"]>[0]);
        },
      });
      return res?.ts;
    },
    update: async (channel, ts, content, skip) => {
      await gate.run({
        key: "chat.update",
        rule: rules.update,
        skip,
        call: () =>
          client.chat.update({ link_names: false, parse: "none", channel, ts, ...content() } as Parameters<
            WebClient["chat"]["update"]
          >[0]),
      });
    },
    delete: async (channel, ts) => {
      await gate.run({
        key: "chat.delete",
        rule: rules.delete,
        call: () => client.chat.delete({ channel, ts }),
      });
    },
    ephemeral: async (args) => {
      await gate.run({
        key: "chat.postEphemeral",
        rule: rules.ephemeral,
        call: () =>
          client.chat.postEphemeral({ link_names: false, parse: "none", ...args } as Parameters<
            WebClient["chat"]["postEphemeral"]
          >[0]),
      });
    },
    usersInfo: async (user) => {
      const res = await gate.run({
        key: "users.info",
        rule: rules.usersInfo,
        call: () => client.users.info({ user }),
      });
      const u = res?.user;
      const displayName = u?.profile?.display_name || u?.real_name || u?.name || user;
      return {
        id: user,
        displayName,
        isAdmin: Boolean(u?.is_admin || u?.is_owner || u?.is_primary_owner),
        isBot: Boolean(u?.is_bot),
      };
    },
    replies: async (channel, ts) => {
      const res = await gate.run({
        key: "conversations.replies",
        rule: rules.replies,
        call: () => client.conversations.replies({ channel, ts, limit: 100, include_all_metadata: true }),
      });
      return (res?.messages ?? []) as ReplyMessage[];
    },
    history: async (channel, oldest) => {
      const res = await gate.run({
        key: "conversations.history",
        rule: rules.history,
        call: () =>
          client.conversations.history({
            channel,
            limit: 100,
            include_all_metadata: true,
            ...(oldest ? { oldest } : {}),
          }),
      });
      return (res?.messages ?? []) as ReplyMessage[];
    },
    react: async (channel, ts, name) => {
      await gate.run({
        key: "reactions.add",
        rule: rules.reactions,
        call: () => client.reactions.add({ channel, timestamp: ts, name }),
      });
    },
    pending: () => gate.pending(),
    drained: () => gate.drained(),
  };
}
