/** Streaming messages: an answer written into one message as it comes (`chat.*Stream`). */
import type { CallOptions, OutboundContext } from "./context.js";

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

export interface SlackStreams {
  /** Start a streaming message; resolves with its ts, or undefined when (optional) dropped. */
  startStream(args: StartStreamArgs, opts?: CallOptions): Promise<string | undefined>;
  /** Append Markdown to a streaming message; false when (optional) dropped. */
  appendStream(channel: string, ts: string, markdown: string, opts?: CallOptions): Promise<boolean>;
  /** End a streaming message (it stays as it is). */
  stopStream(channel: string, ts: string, opts?: CallOptions): Promise<void>;
}

export function createStreamCalls({ client, rules, token, gated }: OutboundContext): SlackStreams {
  return {
    startStream: async (args, opts) => {
      const res = await gated(
        "chat.startStream",
        rules.stream,
        async () => client.chat.startStream({ ...args, token: await token() }),
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
        async () => client.chat.appendStream({ channel, ts, markdown_text: markdown, token: await token() }),
        opts,
      );
      return res !== undefined;
    },
    stopStream: async (channel, ts, opts) => {
      await gated(
        "chat.stopStream",
        rules.stream,
        async () => client.chat.stopStream({ channel, ts, token: await token() }),
        opts,
      );
    },
  };
}
