/**
 * Every Web API call Neo makes in one workspace, with that workspace's bot token, each routed
 * through the rate gate under the method's Slack tier (tiers are per workspace, so gate keys carry
 * the team). Posts never @-mention anyone: `link_names` off, `parse: "none"`, and text already escaped.
 */
import type { webApi } from "@slack/bolt";

type WebClient = webApi.WebClient;

import type { OutboundFile } from "../../core/reporter.js";
import { createRateGate, type RateGate, type RateRule, type Reservation } from "./rate-gate.js";

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
  /** `conversations.info`: Tier 3. */
  conversationsInfo: RateRule;
  /** `conversations.replies`: Tier 3. */
  replies: RateRule;
  /** `conversations.history`: Tier 3. */
  history: RateRule;
  /** `reactions.add`: Tier 3. */
  reactions: RateRule;
  /** A file upload (`files.getUploadURLExternal` + `files.completeUploadExternal`): Tier 2/3, ~20/min. */
  upload: RateRule;
  /** `chat.startStream` and `chat.stopStream`: Tier 2, ~20/min. */
  stream: RateRule;
  /** `chat.appendStream`: Tier 4, ~100/min. */
  appendStream: RateRule;
  /** `assistant.threads.setStatus` / `setSuggestedPrompts` / `setTitle`: Tier 3, ~50/min each. */
  assistant: RateRule;
}

export const SLACK_RATE_RULES: SlackRateRules = {
  // One a second on average, with the short burst Slack grants: a status line and the answer right
  // after it would otherwise hold the answer back a whole second.
  postPerChannel: { limit: 3, windowMs: 3000 },
  update: { limit: 50, windowMs: 60_000 },
  delete: { limit: 50, windowMs: 60_000 },
  ephemeral: { limit: 100, windowMs: 60_000 },
  usersInfo: { limit: 100, windowMs: 60_000 },
  conversationsInfo: { limit: 50, windowMs: 60_000 },
  replies: { limit: 50, windowMs: 60_000 },
  history: { limit: 50, windowMs: 60_000 },
  reactions: { limit: 50, windowMs: 60_000 },
  upload: { limit: 20, windowMs: 60_000 },
  stream: { limit: 20, windowMs: 60_000 },
  appendStream: { limit: 100, windowMs: 60_000 },
  assistant: { limit: 50, windowMs: 60_000 },
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

/** A streaming message's start (https://docs.slack.dev/reference/methods/chat.startStream). */
export interface StartStreamArgs {
  channel: string;
  /** Streamed messages are replies to a user's request. */
  thread_ts: string;
  markdown_text: string;
  /** Who the stream is for; Slack requires them outside DMs. */
  recipient_user_id: string;
  recipient_team_id: string;
}

/** A suggested prompt of an assistant thread: its button title and the message it sends. */
export interface AssistantPrompt {
  title: string;
  message: string;
}

export interface UserInfo {
  id: string;
  displayName: string;
  isAdmin: boolean;
  isBot: boolean;
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

/**
 * How one call takes its room (rate-gate.ts): `optional` calls are cosmetic and dropped when their
 * method has no room now; a `reservation` (from `reserve`, same method) is room taken earlier;
 * `skip` drops a call that is no longer wanted when it is about to go.
 */
export interface CallOptions {
  skip?: () => boolean;
  optional?: boolean;
  reservation?: Reservation;
}

/** Workspace-wide methods whose room a draft or a status line takes ahead, for the call that ends it. */
export type ReservableMethod =
  | "chat.update"
  | "chat.delete"
  | "chat.stopStream"
  | "assistant.threads.setStatus";

export interface SlackOutbound {
  /**
   * Room for one later call of `method` in this workspace, if it is free now (see rate-gate.ts);
   * undefined when the workspace is busy. Spend it with the call's `reservation`, or `release` it.
   */
  reserve(method: ReservableMethod): Reservation | undefined;
  /** Resolves with the new message's ts, or undefined when it was skipped or (optional) dropped. */
  post(args: PostArgs, opts?: CallOptions): Promise<string | undefined>;
  /**
   * `content` is read when the call goes, so a queued edit always sends the latest text. Resolves
   * true when the edit was sent, false when it was skipped or (optional) dropped.
   */
  update(
    channel: string,
    ts: string,
    content: () => { text: string; blocks?: unknown[]; metadata?: MessageMetadata },
    opts?: CallOptions,
  ): Promise<boolean>;
  delete(channel: string, ts: string, opts?: CallOptions): Promise<void>;
  /** Start a streaming message; resolves with its ts, or undefined when (optional) dropped. */
  startStream(args: StartStreamArgs, opts?: CallOptions): Promise<string | undefined>;
  /** Append Markdown to a streaming message; false when (optional) dropped. */
  appendStream(channel: string, ts: string, markdown: string, opts?: CallOptions): Promise<boolean>;
  /** End a streaming message (it stays as it is). */
  stopStream(channel: string, ts: string, opts?: CallOptions): Promise<void>;
  /** The assistant thread's status ("is working…"); "" clears it. False when (optional) dropped. */
  assistantStatus(channel: string, threadTs: string, status: string, opts?: CallOptions): Promise<boolean>;
  assistantPrompts(
    channel: string,
    threadTs: string,
    prompts: AssistantPrompt[],
    title?: string,
  ): Promise<void>;
  assistantTitle(channel: string, threadTs: string, title: string): Promise<void>;
  ephemeral(args: {
    channel: string;
    user: string;
    text: string;
    thread_ts?: string;
    blocks?: unknown[];
  }): Promise<void>;
  usersInfo(user: string): Promise<UserInfo>;
  /** What `conversations.info` says of a channel: its name (a DM's is its id) and who may read it. */
  channelInfo(channel: string): Promise<ChannelInfo>;
  /** A thread's messages (first page), metadata included. */
  /**
   * A thread's messages, oldest first (all pages, at most REPLIES_PAGES); with `oldest`, only those
   * after it (Slack's `oldest`, exclusive) and the thread's parent.
   */
  replies(channel: string, ts: string, oldest?: string): Promise<ReplyMessage[]>;
  /** A channel's top-level messages after `oldest` (first page, newest first), metadata included. */
  history(channel: string, oldest?: string): Promise<ReplyMessage[]>;
  react(channel: string, ts: string, name: string, opts?: CallOptions): Promise<void>;
  /** Upload files into a thread with a comment (the SDK's `uploadV2`); throws when Slack refuses. */
  upload(channel: string, threadTs: string, files: readonly OutboundFile[], comment: string): Promise<void>;
  /** Calls queued or in flight. */
  pending(): number;
  /** Resolves once no call is queued or in flight. */
  drained(): Promise<void>;
}

const QUIET = { link_names: false, parse: "none", unfurl_links: false, unfurl_media: false } as const;

export interface SlackOutboundOptions {
  rules?: SlackRateRules;
  /** Shared by every workspace's outbound, so shutdown can wait for all queued calls. */
  gate?: RateGate;
  /** The workspace (team id) these calls act in. */
  team: string;
  /** Its bot token (single-token mode: `SLACK_BOT_TOKEN`; OAuth: the installation's). */
  token: () => Promise<string>;
}

export function createSlackOutbound(client: WebClient, o: SlackOutboundOptions): SlackOutbound {
  const rules = o.rules ?? SLACK_RATE_RULES;
  const gate: RateGate = o.gate ?? createRateGate();
  const { team } = o;
  /** The gate key of a workspace-wide method (`scope`: a per-channel one's channel). */
  const keyOf = (method: string, scope?: string) => `${team}:${method}${scope ? `:${scope}` : ""}`;
  const gated = <T>(
    method: string,
    rule: RateRule,
    call: () => Promise<T>,
    opts: CallOptions = {},
    scope?: string,
  ) => gate.run({ key: keyOf(method, scope), method, rule, call, ...opts });
  const reservable: Record<ReservableMethod, RateRule> = {
    "chat.update": rules.update,
    "chat.delete": rules.delete,
    "chat.stopStream": rules.stream,
    "assistant.threads.setStatus": rules.assistant,
  };
  return {
    reserve: (method) => gate.reserve(keyOf(method), method, reservable[method]),
    post: async (args, opts) => {
      const res = await gated(
        "chat.postMessage",
        rules.postPerChannel,
        async () => {
          const { thread_ts, ...rest } = args;
          return client.chat.postMessage({
            ...QUIET,
            ...rest,
            ...(thread_ts ? { thread_ts } : {}),
            token: await o.token(),
          } as Parameters<WebClient["chat"]["postMessage"]>[0]);
        },
        opts,
        args.channel,
      );
      return res?.ts;
    },
    update: async (channel, ts, content, opts) => {
      const res = await gated(
        "chat.update",
        rules.update,
        async () =>
          client.chat.update({
            link_names: false,
            parse: "none",
            channel,
            ts,
            ...content(),
            token: await o.token(),
          } as Parameters<WebClient["chat"]["update"]>[0]),
        opts,
      );
      return res !== undefined;
    },
    delete: async (channel, ts, opts) => {
      await gated(
        "chat.delete",
        rules.delete,
        async () => client.chat.delete({ channel, ts, token: await o.token() }),
        opts,
      );
    },
    startStream: async (args, opts) => {
      const res = await gated(
        "chat.startStream",
        rules.stream,
        async () => client.chat.startStream({ ...args, token: await o.token() }),
        opts,
      );
      if (res === undefined) return undefined;
      if (!res.ts) throw new Error("chat.startStream returned no ts");
      return res.ts;
    },
    appendStream: async (channel, ts, markdown, opts) => {
      const res = await gated(
        "chat.appendStream",
        rules.appendStream,
        async () =>
          client.chat.appendStream({ channel, ts, markdown_text: markdown, token: await o.token() }),
        opts,
      );
      return res !== undefined;
    },
    stopStream: async (channel, ts, opts) => {
      await gated(
        "chat.stopStream",
        rules.stream,
        async () => client.chat.stopStream({ channel, ts, token: await o.token() }),
        opts,
      );
    },
    assistantStatus: async (channel, threadTs, status, opts) => {
      const res = await gated(
        "assistant.threads.setStatus",
        rules.assistant,
        async () =>
          client.assistant.threads.setStatus({
            channel_id: channel,
            thread_ts: threadTs,
            status,
            token: await o.token(),
          }),
        opts,
      );
      return res !== undefined;
    },
    assistantPrompts: async (channel, threadTs, prompts, title) => {
      await gated("assistant.threads.setSuggestedPrompts", rules.assistant, async () =>
        client.assistant.threads.setSuggestedPrompts({
          channel_id: channel,
          thread_ts: threadTs,
          prompts: prompts as [AssistantPrompt, ...AssistantPrompt[]],
          ...(title ? { title } : {}),
          token: await o.token(),
        }),
      );
    },
    assistantTitle: async (channel, threadTs, title) => {
      await gated("assistant.threads.setTitle", rules.assistant, async () =>
        client.assistant.threads.setTitle({
          channel_id: channel,
          thread_ts: threadTs,
          title,
          token: await o.token(),
        }),
      );
    },
    ephemeral: async (args) => {
      await gated("chat.postEphemeral", rules.ephemeral, async () =>
        client.chat.postEphemeral({
          link_names: false,
          parse: "none",
          ...args,
          token: await o.token(),
        } as Parameters<WebClient["chat"]["postEphemeral"]>[0]),
      );
    },
    usersInfo: async (user) => {
      const res = await gated("users.info", rules.usersInfo, async () =>
        client.users.info({ user, token: await o.token() }),
      );
      const u = res?.user;
      const displayName = u?.profile?.display_name || u?.real_name || u?.name || user;
      return {
        id: user,
        displayName,
        isAdmin: Boolean(u?.is_admin || u?.is_owner || u?.is_primary_owner),
        isBot: Boolean(u?.is_bot),
      };
    },
    channelInfo: async (channel) => {
      const res = await gated("conversations.info", rules.conversationsInfo, async () =>
        client.conversations.info({ channel, token: await o.token() }),
      );
      const c = res?.channel;
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
            token: await o.token(),
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
          token: await o.token(),
        }),
      );
      return (res?.messages ?? []) as ReplyMessage[];
    },
    react: async (channel, ts, name, opts) => {
      await gated(
        "reactions.add",
        rules.reactions,
        async () => client.reactions.add({ channel, timestamp: ts, name, token: await o.token() }),
        opts,
      );
    },
    upload: async (channel, threadTs, files, comment) => {
      await gated("files.upload", rules.upload, async () =>
        client.files.uploadV2({
          channel_id: channel,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          // An answer's file goes without a comment: its message is said on its own.
          ...(comment ? { initial_comment: comment } : {}),
          file_uploads: files.map((f) => ({ file: Buffer.from(f.bytes), filename: f.name, title: f.name })),
          token: await o.token(),
        } as Parameters<WebClient["files"]["uploadV2"]>[0]),
      );
    },
    pending: () => gate.pending(),
    drained: () => gate.drained(),
  };
}
