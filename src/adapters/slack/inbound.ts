/**
 * Slack events → what Neo should do with them. Pure: validates the payload (zod), decides whether to
 * ignore it (and says why), and derives the conversation key, message identity and the content
 * (rendered for the model by `readable.ts`).
 */
import { z } from "zod";
import type { InboundFile } from "../../core/files/types.js";
import { conversationKey } from "../../core/keys.js";
import { slackFileSchema, slackFilesOf } from "./files.js";
import { onlyMentionsNeo, type SlackContent } from "./readable.js";
import type { SlackIdentity } from "./workspaces.js";

export const slackMessageEventSchema = z.object({
  type: z.enum(["app_mention", "message"]),
  channel: z.string().min(1),
  ts: z.string().min(1),
  user: z.string().optional(),
  text: z.string().optional(),
  thread_ts: z.string().optional(),
  subtype: z.string().optional(),
  bot_id: z.string().optional(),
  channel_type: z.string().optional(),
  // Who wrote it, as `app_mention` events may carry it (@slack/types AppMentionEvent.user_profile).
  user_profile: z
    .object({
      display_name: z.string().nullish(),
      real_name: z.string().nullish(),
      name: z.string().nullish(),
    })
    .optional(),
  edited: z.unknown().optional(),
  files: z.array(slackFileSchema).optional(),
  // Read item by item when rendered (readable.ts), so one odd attachment never hides the message.
  attachments: z.array(z.unknown()).optional(),
});
export type SlackMessageEvent = z.infer<typeof slackMessageEventSchema>;

/** What to do with one event. `ignore` carries the reason for the debug log. */
export type InboundDecision =
  | { kind: "ignore"; reason: string }
  | {
      kind: "message";
      /** Message identity (team/channel/ts): the same message via app_mention and message.im is one. */
      id: string;
      conversation: string;
      channel: string;
      /** Where answers go: the thread, or undefined for an unthreaded DM (a DM thread is answered in
       * that thread, though its conversation is the DM's). */
      threadTs: string | undefined;
      /** True when this is a reply inside an existing thread (context worth fetching). */
      inThread: boolean;
      ts: string;
      user: string;
      /** Text and shared messages as Slack sent them; `readable.ts` renders them. */
      content: SlackContent;
      /** Files shared with the message (read when it enters the transcript). */
      files: InboundFile[];
      shared: boolean;
      /** The event's `channel_type`, when it carried one (message events do; app_mention does not). */
      channelType: string | undefined;
      /** The author's name as the event gave it (`user_profile`), when it did. */
      authorName: string | undefined;
      /** Delivered as `app_mention`, or its text mentions Neo. A channel message without one is
       * answered in Neo's threads, elsewhere only where the channel's settings say so (`channelGate`). */
      mentioned: boolean;
    };

/** Slackbot's own user id: its notices (reminders, tips, "you were added…") land in the DM. */
export const SLACKBOT_USER = "USLACKBOT";
/** Subtypes a person writes; every other subtype is a system notice (joins, topic, pins, edits…). */
const PERSON_SUBTYPES = new Set(["thread_broadcast", "file_share", "me_message"]);

/** Who besides people Neo answers: bot ids (`B…`) or bot user ids (`U…`) from `NEO_ANSWER_BOTS`. */
export interface InboundPolicy {
  answerBots: ReadonlySet<string>;
}
const NO_BOTS: InboundPolicy = { answerBots: new Set() };

/** Whether `text` mentions Neo (`<@UNEO>` or `<@UNEO|neo>`). */
function mentionsNeo(text: string, botUserId: string): boolean {
  return text.includes(`<@${botUserId}>`) || text.includes(`<@${botUserId}|`);
}

export function decideInbound(raw: unknown, me: SlackIdentity, policy = NO_BOTS): InboundDecision {
  const parsed = slackMessageEventSchema.safeParse(raw);
  if (!parsed.success)
    return { kind: "ignore", reason: `unrecognised event shape: ${parsed.error.issues[0]?.message}` };
  const e = parsed.data;
  if (e.user === me.botUserId || (me.botId !== undefined && e.bot_id === me.botId)) {
    return { kind: "ignore", reason: "Neo's own post" };
  }
  if (e.user === SLACKBOT_USER) return { kind: "ignore", reason: "Slackbot notice" };
  if (e.subtype === "message_changed" || e.edited !== undefined)
    return { kind: "ignore", reason: "message edit" };
  if (e.subtype === "message_deleted") return { kind: "ignore", reason: "message deletion" };
  const bot = e.bot_id !== undefined || e.subtype === "bot_message";
  const allowedBot =
    bot &&
    ((e.bot_id !== undefined && policy.answerBots.has(e.bot_id)) ||
      (e.user !== undefined && policy.answerBots.has(e.user)));
  if (bot && !allowedBot) return { kind: "ignore", reason: "bot message (not in NEO_ANSWER_BOTS)" };
  if (e.subtype !== undefined && !PERSON_SUBTYPES.has(e.subtype) && !allowedBot) {
    return { kind: "ignore", reason: `message subtype ${e.subtype}` };
  }
  // A `bot_message` from an allowed bot may carry only its bot id: that is who speaks.
  const author = e.user ?? (allowedBot ? e.bot_id : undefined);
  if (!author) return { kind: "ignore", reason: "no author" };
  const isDm = e.type === "message" && e.channel_type === "im";
  const files = slackFilesOf(e.files ?? [], me.teamId);
  const content: SlackContent = { text: e.text ?? "", attachments: e.attachments ?? [] };
  if (onlyMentionsNeo(content.text ?? "", me.botUserId) && files.length === 0 && !content.attachments?.length)
    return { kind: "ignore", reason: "empty message" };
  // A mention answers in its thread (or starts one on the message). A DM is one conversation: a
  // reply in a thread there (under Neo's answer) continues it, and is answered in that thread.
  const threadTs = isDm ? e.thread_ts : (e.thread_ts ?? e.ts);
  return {
    kind: "message",
    id: `${me.teamId}/${e.channel}/${e.ts}`,
    conversation: conversationKey({
      platform: "slack",
      workspace: me.teamId,
      channel: e.channel,
      thread: isDm ? e.channel : (threadTs ?? e.channel),
    }),
    channel: e.channel,
    threadTs,
    inThread: e.thread_ts !== undefined && e.thread_ts !== e.ts,
    ts: e.ts,
    user: author,
    content,
    files,
    shared: !isDm,
    channelType: e.channel_type,
    authorName:
      e.user_profile?.display_name || e.user_profile?.real_name || e.user_profile?.name || undefined,
    // The channel-message copy of a mention (`message.channels` sends both) counts as one too.
    mentioned: e.type === "app_mention" || mentionsNeo(e.text ?? "", me.botUserId),
  };
}
