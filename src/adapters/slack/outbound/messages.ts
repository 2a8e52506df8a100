/**
 * Messages Neo posts, edits and removes in a channel or thread (`chat.*`, `reactions.add`). Posts
 * never @-mention anyone: `link_names` off, `parse: "none"`, and text already escaped.
 */
import type { CallOptions, OutboundContext, WebClient } from "./context.js";

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

export interface SlackMessages {
  /** Resolves with the new message's ts, or undefined when it was skipped or (optional) dropped. */
  post(args: PostArgs, opts?: CallOptions): Promise<string | undefined>;
  /** A post in `channel` comes next (an answer being logged): its room is asked for now. */
  postSoon(channel: string): void;
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
  ephemeral(args: {
    channel: string;
    user: string;
    text: string;
    thread_ts?: string;
    blocks?: unknown[];
  }): Promise<void>;
  react(channel: string, ts: string, name: string, opts?: CallOptions): Promise<void>;
}

const QUIET = { link_names: false, parse: "none", unfurl_links: false, unfurl_media: false } as const;

export function createMessageCalls({ client, rules, token, gated, ahead }: OutboundContext): SlackMessages {
  return {
    postSoon: (channel) => ahead("chat.postMessage", rules.postPerChannel, channel),
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
            token: await token(),
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
            token: await token(),
          } as Parameters<WebClient["chat"]["update"]>[0]),
        opts,
      );
      return res !== undefined;
    },
    delete: async (channel, ts, opts) => {
      await gated(
        "chat.delete",
        rules.delete,
        async () => client.chat.delete({ channel, ts, token: await token() }),
        opts,
      );
    },
    ephemeral: async (args) => {
      await gated("chat.postEphemeral", rules.ephemeral, async () =>
        client.chat.postEphemeral({
          link_names: false,
          parse: "none",
          ...args,
          token: await token(),
        } as Parameters<WebClient["chat"]["postEphemeral"]>[0]),
      );
    },
    react: async (channel, ts, name, opts) => {
      await gated(
        "reactions.add",
        rules.reactions,
        async () => client.reactions.add({ channel, timestamp: ts, name, token: await token() }),
        opts,
      );
    },
  };
}
