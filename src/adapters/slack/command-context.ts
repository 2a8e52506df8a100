/**
 * Who runs a `/neo` command or clicks one of its buttons on Slack, and how references resolve in
 * their workspace. Admin rights: configured ids, or workspace admin/owner from `users.info` (asked
 * only when the command needs an admin).
 */
import type { AccessPolicy } from "../../core/access/policy.js";
import type { CommandContext } from "../../core/commands/types.js";
import { channelKey, conversationKey, type UserKey, userKey } from "../../core/keys.js";
import type { SlackWorkspaces } from "./workspaces.js";

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

export async function slackCommandContext(
  deps: { access: Pick<AccessPolicy, "isAdmin">; workspaces: SlackWorkspaces },
  teamId: string,
  userId: string,
  channelId: string,
  needAdmin: boolean,
): Promise<CommandContext> {
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
}
