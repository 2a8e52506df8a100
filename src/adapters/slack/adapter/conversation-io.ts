/**
 * The per-conversation IO factory: for a conversation (and the thread it answers in), the Reporter,
 * approval channel, file source and queued-message acknowledgement, all through its workspace's
 * calls. IOs are cached (each holds a thread's status state), oldest dropped past the bound.
 */

import type { ConversationIO } from "../../../core/conversations/types.js";
import { type ConversationKey, parseConversationKey } from "../../../core/keys.js";
import type { Store } from "../../../store/types.js";
import { createSlackApprovalChannel } from "../approvals.js";
import type { AssistantThreads } from "../assistant-threads.js";
import type { DraftPace } from "../draft/pacer.js";
import { slackFileSource } from "../files.js";
import { createSlackFormChannel } from "../forms.js";
import { createSlackReporter } from "../reporter.js";
import { createAssistantStatus, createThreadStatus, eitherStatus } from "../status.js";
import type { SlackWorkspaces } from "../workspaces.js";

/** Conversation IOs kept (each holds a thread's status state). */
const IO_CACHE = 2000;

export interface ConversationIOsDeps {
  workspaces: SlackWorkspaces;
  /** Assistant-panel threads this process saw recently: their Status is the thread's. */
  assistantThreads: AssistantThreads;
  pace: DraftPace;
  /** How long a turn's status waits before it is shown (`status.ts`, `STATUS_DELAY_MS`). */
  statusDelayMs?: number;
  store: Store;
  /** Where files are fetched from (`SLACK_API_URL`). */
  apiUrl?: string;
}

export interface ConversationIOs {
  /** The IO answering in `threadTs` (undefined: the channel itself, an unthreaded DM). */
  ioIn: (conversation: ConversationKey, threadTs: string | undefined) => ConversationIO;
  /** The IO of a conversation, in the thread its key names. */
  io: (conversation: ConversationKey) => ConversationIO;
}

export function createConversationIOs(deps: ConversationIOsDeps): ConversationIOs {
  const { workspaces, assistantThreads, pace } = deps;
  const ios = new Map<string, ConversationIO>();
  const ioIn = (conversation: ConversationKey, threadTs: string | undefined): ConversationIO => {
    const cacheKey = `${conversation}#${threadTs ?? ""}`;
    const hit = ios.get(cacheKey);
    if (hit) return hit;
    const { workspace, channel } = parseConversationKey(conversation);
    const out = workspaces.out(workspace);
    const made: ConversationIO = {
      reporter: createSlackReporter({
        out,
        channel,
        threadTs: threadTs ?? "",
        status: threadTs
          ? eitherStatus(
              () => assistantThreads.has(workspace, channel, threadTs),
              createAssistantStatus(out, channel, threadTs),
              createThreadStatus(out, channel, threadTs, deps.statusDelayMs),
            )
          : createThreadStatus(out, channel, "", deps.statusDelayMs),
        pace,
        me: () => workspaces.identity(workspace),
        store: deps.store,
      }),
      approvals: createSlackApprovalChannel(out, channel, threadTs ?? ""),
      forms: createSlackFormChannel(out, channel, threadTs ?? ""),
      files: slackFileSource(() => workspaces.token(workspace), deps.apiUrl),
      acknowledgeQueued: async (message) => {
        const ts = message.id.split("/")[2];
        // Cosmetic: dropped when reactions.add has no room now (a busy workspace).
        if (ts) await out.react(channel, ts, "eyes", { optional: true });
      },
    };
    if (ios.size >= IO_CACHE) ios.delete(ios.keys().next().value as string);
    ios.set(cacheKey, made);
    return made;
  };
  const io = (conversation: ConversationKey): ConversationIO => {
    const { channel, thread } = parseConversationKey(conversation);
    return ioIn(conversation, thread === channel ? undefined : thread);
  };
  return { ioIn, io };
}
