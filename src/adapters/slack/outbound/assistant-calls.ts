/** Calls on an assistant thread (the Slack assistant panel): its status, suggested prompts, title. */
import type { CallOptions, OutboundContext } from "./context.js";

/** A suggested prompt of an assistant thread: its button title and the message it sends. */
export interface AssistantPrompt {
  title: string;
  message: string;
}

export interface SlackAssistantCalls {
  /** The assistant thread's status ("is working…"); "" clears it. False when (optional) dropped. */
  assistantStatus(channel: string, threadTs: string, status: string, opts?: CallOptions): Promise<boolean>;
  assistantPrompts(
    channel: string,
    threadTs: string,
    prompts: AssistantPrompt[],
    title?: string,
  ): Promise<void>;
  assistantTitle(channel: string, threadTs: string, title: string): Promise<void>;
}

export function createAssistantCalls({ client, rules, token, gated }: OutboundContext): SlackAssistantCalls {
  return {
    assistantStatus: async (channel, threadTs, status, opts) => {
      const res = await gated(
        "assistant.threads.setStatus",
        rules.assistant,
        async () =>
          client.assistant.threads.setStatus({
            channel_id: channel,
            thread_ts: threadTs,
            status,
            token: await token(),
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
          token: await token(),
        }),
      );
    },
    assistantTitle: async (channel, threadTs, title) => {
      await gated("assistant.threads.setTitle", rules.assistant, async () =>
        client.assistant.threads.setTitle({
          channel_id: channel,
          thread_ts: threadTs,
          title,
          token: await token(),
        }),
      );
    },
  };
}
