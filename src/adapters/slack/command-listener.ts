/**
 * `/neo` on Slack: parse and run through the platform-free command layer, reply ephemerally. Admin
 * rights: configured ids, or workspace admin/owner from `users.info` (asked only for admin commands).
 * `ask` posts the question in the channel and runs a turn in its thread: the answer is posted there,
 * the status is the command's ephemeral reply, replaced in place.
 */
import type { App, RespondFn, SlashCommand } from "@slack/bolt";
import type { AccessPolicy } from "../../core/access/policy.js";
import {
  needsAdmin,
  pageHeading,
  parseCommand,
  runCommand,
  runConfirmed,
} from "../../core/commands/index.js";
import type { CommandDeps, CommandReply } from "../../core/commands/types.js";
import type { ConversationIO, Conversations } from "../../core/conversations/types.js";
import { conversationKey, type UserKey, userKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import { slackCommandContext } from "./command-context.js";
import type { DraftPace } from "./draft/pacer.js";
import { memoryBlocks } from "./memory-blocks.js";
import { escapeMrkdwn, markdownToMrkdwn } from "./mrkdwn.js";
import { createSlackReporter } from "./reporter.js";
import { createEphemeralStatus } from "./status.js";
import type { SlackWorkspaces } from "./workspaces.js";

export const CONFIRM_ACTION = "neo_confirm";
/** A command slower than this is acked with "working" and answered through `response_url`. */
const INLINE_REPLY_MS = 2000;

export interface CommandListenerDeps {
  commands: CommandDeps;
  access: Pick<AccessPolicy, "isAllowed" | "isAdmin">;
  conversations: Pick<Conversations, "submit">;
  /** The workspace each command came from: its token and users. */
  workspaces: SlackWorkspaces;
  /** The default IO of a conversation (approvals of an `ask` turn still go to its thread). */
  io: (conversation: string) => ConversationIO;
  /** When `/neo ask` answers are written as they stream. */
  pace: DraftPace;
  /** Where a streaming answer's message is noted (reporter.ts). */
  store: Store;
}

const slog = log.child({ component: "slack" });

/** What a reply shows the caller (`owner`: their user id, named by memory buttons). */
function render(
  reply: Extract<CommandReply, { kind: "reply" | "memory" }>,
  owner: string,
): Record<string, unknown> {
  if (reply.kind === "memory") {
    return {
      response_type: "ephemeral",
      text: markdownToMrkdwn(pageHeading(reply.view)),
      blocks: memoryBlocks(reply.view, owner),
    };
  }
  const text = markdownToMrkdwn(reply.text);
  if (!reply.confirm) return { response_type: "ephemeral", text };
  return {
    response_type: "ephemeral",
    text,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text } },
      {
        type: "actions",
        elements: [
          {
            type: "button",
            action_id: CONFIRM_ACTION,
            style: "danger",
            text: { type: "plain_text", text: reply.confirm.label },
            value: reply.confirm.action,
          },
        ],
      },
    ],
  };
}

export function registerCommands(app: App, deps: CommandListenerDeps): void {
  const context = (teamId: string, userId: string, channelId: string, needAdmin: boolean) =>
    slackCommandContext(deps, teamId, userId, channelId, needAdmin);

  const ask = async (
    command: SlashCommand,
    text: string,
    caller: UserKey,
    respond: RespondFn,
  ): Promise<void> => {
    const channel = command.channel_id;
    const out = deps.workspaces.out(command.team_id);
    const ts = await out.post({ channel, text: `<@${command.user_id}> asked: ${escapeMrkdwn(text)}` });
    if (!ts) throw new Error("the question could not be posted");
    const conversation = conversationKey({
      platform: "slack",
      workspace: command.team_id,
      channel,
      thread: ts,
    });
    // Neither waits for room: a name not known yet is the command's `user_name`, an unknown kind guessed.
    const [name, place] = await Promise.all([
      deps.workspaces.users(command.team_id).name(command.user_id),
      deps.workspaces.channels(command.team_id).place(channel),
    ]);
    const io: ConversationIO = {
      reporter: createSlackReporter({
        out,
        channel,
        threadTs: ts,
        status: createEphemeralStatus((m) => respond(m as Parameters<RespondFn>[0])),
        pace: deps.pace,
        me: () => deps.workspaces.identity(command.team_id),
        store: deps.store,
      }),
      approvals: deps.io(conversation).approvals,
    };
    await deps.conversations.submit(
      {
        id: `${command.team_id}/${channel}/${ts}`,
        conversation,
        speaker: { userKey: caller, displayName: name ?? (command.user_name || command.user_id) },
        text,
        shared: !channel.startsWith("D"),
        place,
        receivedAt: Date.now(),
      },
      io,
    );
  };

  /** The export: a file in the caller's DM with Neo (only they and Neo are in it). */
  const sendFile = async (
    command: SlashCommand,
    reply: Extract<CommandReply, { kind: "file" }>,
    respond: RespondFn,
  ): Promise<void> => {
    const out = deps.workspaces.out(command.team_id);
    const dm = await out.openDm(command.user_id);
    await out.upload(dm, "", [{ ...reply.file, type: "application/json" }], reply.text);
    await respond({
      response_type: "ephemeral",
      replace_original: true,
      text: "Sent: the file is in your DM with me.",
    });
  };

  app.command("/neo", async ({ command, ack, respond }) => {
    const caller = userKey({ platform: "slack", workspace: command.team_id, user: command.user_id });
    if (!(await deps.access.isAllowed(caller))) {
      slog.debug({ user: caller }, "refused /neo: user is not allowed to use Neo");
      await ack({
        response_type: "ephemeral",
        text: "An admin has turned Neo off for you, so I can't run that.",
      });
      return;
    }
    const cmd = parseCommand(command.text);
    const needAdmin = needsAdmin(cmd);
    const ctx = await context(command.team_id, command.user_id, command.channel_id, needAdmin);
    const running = runCommand(cmd, ctx, deps.commands);
    let timer: NodeJS.Timeout | undefined;
    const slow = new Promise<"slow">((resolve) => {
      timer = setTimeout(() => resolve("slow"), INLINE_REPLY_MS);
    });
    const first = await Promise.race([running, slow]);
    clearTimeout(timer);
    if (first !== "slow" && (first.kind === "reply" || first.kind === "memory")) {
      await ack(render(first, command.user_id) as Parameters<typeof ack>[0]);
      return;
    }
    await ack({ response_type: "ephemeral", text: "_Working on it…_" });
    const later = async (reply: CommandReply): Promise<void> => {
      if (reply.kind === "ask") return ask(command, reply.text, caller, respond);
      if (reply.kind === "file") return sendFile(command, reply, respond);
      await respond({
        ...render(reply, command.user_id),
        replace_original: true,
      } as Parameters<RespondFn>[0]);
    };
    void (first === "slow" ? running : Promise.resolve(first)).then(later).catch(async (err: unknown) => {
      slog.error({ err }, "/neo reply failed");
      await respond({
        response_type: "ephemeral",
        replace_original: true,
        text: "Sorry, I couldn't finish that. Try again.",
      }).catch((e: unknown) => slog.warn({ err: e }, "could not tell the caller /neo failed"));
    });
  });

  app.action(CONFIRM_ACTION, async ({ ack, body, respond, action }) => {
    await ack();
    const value = "value" in action && typeof action.value === "string" ? action.value : "";
    const teamId = body.team?.id ?? body.user.team_id ?? "";
    const channelId = "channel" in body && body.channel ? body.channel.id : "";
    void (async () => {
      // An admin's erasure of another user asks whether the clicker is an admin now.
      const ctx = await context(teamId, body.user.id, channelId, value !== "forget");
      const reply = await runConfirmed(value, ctx, deps.commands);
      if (reply.kind === "reply")
        await respond({ ...render(reply, body.user.id), replace_original: true } as Parameters<RespondFn>[0]);
    })().catch((err: unknown) => slog.error({ err }, "/neo confirm failed"));
  });
}
