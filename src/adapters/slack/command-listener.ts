/**
 * `/neo` on Slack: parse and run through the platform-free command layer, reply ephemerally. Admin
 * rights: configured ids, or workspace admin/owner from `users.info` (asked only for admin commands).
 * `ask` posts the question in the channel and runs a turn in its thread: the answer is posted there,
 * the status is the command's ephemeral reply, replaced in place.
 */
import type { App, RespondFn, SlashCommand } from "@slack/bolt";
import type { AccessPolicy } from "../../core/access/policy.js";
import { needsAdmin, parseCommand, runCommand, runConfirmed } from "../../core/commands/index.js";
import type { CommandContext, CommandDeps, CommandReply } from "../../core/commands/types.js";
import type { ConversationIO, Conversations } from "../../core/conversations/types.js";
import { channelKey, conversationKey, type UserKey, userKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import type { DraftPace } from "./draft/pacer.js";
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

/** `<@U123|name>`, `<@U123>`, `@U123` or `U123` → the user id. */
export function slackUserId(raw: string): string | undefined {
  const m = /^<@([UW][A-Z0-9]+)(\|[^>]*)?>$/.exec(raw) ?? /^@?([UW][A-Z0-9]{2,})$/.exec(raw);
  return m?.[1];
}

/** A message link `…/archives/C123/p1700000000000100[?thread_ts=…]` → channel and thread ts. */
export function parseThreadLink(raw: string): { channel: string; threadTs: string } | undefined {
  const link = raw.replace(/^<|>$/g, "").split("|")[0]!;
  const m = /\/archives\/([A-Z0-9]+)\/p(\d{10})(\d{6})(?:\?(.*))?$/.exec(link);
  if (!m) return undefined;
  const thread = new URLSearchParams(m[4] ?? "").get("thread_ts");
  return { channel: m[1]!, threadTs: thread ?? `${m[2]}.${m[3]}` };
}

function render(reply: Extract<CommandReply, { kind: "reply" }>): Record<string, unknown> {
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
  const context = async (
    teamId: string,
    userId: string,
    channelId: string,
    needAdmin: boolean,
  ): Promise<CommandContext> => {
    const caller: UserKey = userKey({ platform: "slack", workspace: teamId, user: userId });
    let isAdmin = deps.access.isAdmin(caller);
    if (!isAdmin && needAdmin)
      isAdmin = deps.access.isAdmin(caller, (await deps.workspaces.users(teamId).get(userId)).isAdmin);
    return {
      caller,
      isAdmin,
      // DM channel ids start with D: channel settings do not apply there.
      channel: channelId.startsWith("D")
        ? undefined
        : channelKey({ platform: "slack", workspace: teamId, channel: channelId }),
      resolveUser: (raw) => {
        const id = slackUserId(raw);
        return id ? userKey({ platform: "slack", workspace: teamId, user: id }) : undefined;
      },
      resolveConversation: (target) => {
        if (target) {
          const t = parseThreadLink(target);
          return t
            ? conversationKey({
                platform: "slack",
                workspace: teamId,
                channel: t.channel,
                thread: t.threadTs,
              })
            : undefined;
        }
        // Slash commands carry no thread; in a DM the DM itself is the conversation.
        return channelId.startsWith("D")
          ? conversationKey({ platform: "slack", workspace: teamId, channel: channelId, thread: channelId })
          : undefined;
      },
    };
  };

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
    if (first === "slow") {
      await ack({ response_type: "ephemeral", text: "_Working on it…_" });
      void running
        .then((reply) =>
          reply.kind === "reply"
            ? respond({ ...render(reply), replace_original: true } as Parameters<RespondFn>[0])
            : undefined,
        )
        .catch((err: unknown) => slog.error({ err }, "/neo reply failed"));
      return;
    }
    if (first.kind === "reply") {
      await ack(render(first) as Parameters<typeof ack>[0]);
      return;
    }
    await ack({ response_type: "ephemeral", text: "_Working on it…_" });
    void ask(command, first.text, caller, respond).catch(async (err: unknown) => {
      slog.error({ err }, "/neo ask failed");
      await respond({
        response_type: "ephemeral",
        replace_original: true,
        text: "Sorry, I couldn't start on that. Try again.",
      });
    });
  });

  app.action(CONFIRM_ACTION, async ({ ack, body, respond, action }) => {
    await ack();
    const value = "value" in action && typeof action.value === "string" ? action.value : "";
    const teamId = body.team?.id ?? body.user.team_id ?? "";
    const channelId = "channel" in body && body.channel ? body.channel.id : "";
    void (async () => {
      const ctx = await context(teamId, body.user.id, channelId, false);
      const reply = await runConfirmed(value, ctx, deps.commands);
      if (reply.kind === "reply")
        await respond({ ...render(reply), replace_original: true } as Parameters<RespondFn>[0]);
    })().catch((err: unknown) => slog.error({ err }, "/neo confirm failed"));
  });
}
