/**
 * Clicks on `/neo memory` buttons (in the ephemeral page or the App Home) and the App Home itself
 * (`app_home_opened` → `views.publish`, https://docs.slack.dev/reference/events/app_home_opened).
 * Ack first. The button's value is platform input: parsed with zod (`parseMemoryAction`); the click
 * acts on the clicker's own memory, and only when the clicker is the page's owner: anyone else is
 * told so privately and nothing changes.
 */
import type { App, BlockAction, ButtonAction, RespondFn, SlackActionMiddlewareArgs } from "@slack/bolt";
import type { AccessPolicy } from "../../core/access/policy.js";
import {
  type CommandDeps,
  homeView,
  pageHeading,
  parseMemoryAction,
  runMemoryAction,
} from "../../core/commands/index.js";
import { userKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import { slackCommandContext } from "./command-context.js";
import type { SlackEvents } from "./event-router.js";
import { homeBlocks, MEMORY_ACTION, memoryBlocks } from "./memory-blocks.js";
import { markdownToMrkdwn } from "./mrkdwn.js";
import type { SlackWorkspaces } from "./workspaces.js";

export interface MemoryListenerDeps {
  commands: CommandDeps;
  access: Pick<AccessPolicy, "isAllowed" | "isAdmin">;
  workspaces: SlackWorkspaces;
}

const slog = log.child({ component: "slack" });

/** Every memory button's action_id (`neo_mem_<op>_<n>`). */
export const MEMORY_ACTION_ID = new RegExp(`^${MEMORY_ACTION}_`);

export function registerMemoryListeners(app: App, events: SlackEvents, deps: MemoryListenerDeps): void {
  const publishHome = async (teamId: string, userId: string, page = 0, note?: string) => {
    const ctx = await slackCommandContext(deps, teamId, userId, "", false);
    if (!(await deps.access.isAllowed(ctx.caller))) return;
    const home = await homeView(ctx, deps.commands, page, note);
    await deps.workspaces.out(teamId).publishHome(userId, homeBlocks(home, userId));
  };

  events.on("app_home_opened", async ({ event, body }) => {
    if (event.tab !== "home") return;
    const teamId = (body as { team_id?: string }).team_id ?? "";
    void publishHome(teamId, event.user).catch((err: unknown) =>
      slog.warn({ err }, "could not publish the App Home"),
    );
  });

  const onClick = async (args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>): Promise<void> => {
    const { body, action, respond } = args;
    const teamId = body.team?.id ?? body.user.team_id ?? "";
    const clicker = body.user.id;
    const channel = body.channel?.id ?? body.container?.channel_id;
    const parsed = parseMemoryAction(action.value);
    const tell = async (text: string) => {
      // On the App Home there is no message to answer: the clicker's own Home says it.
      if (body.view?.type === "home") return publishHome(teamId, clicker, 0, text);
      if (body.response_url) {
        await respond({ response_type: "ephemeral", replace_original: false, text });
        return;
      }
      if (channel) await deps.workspaces.out(teamId).ephemeral({ channel, user: clicker, text });
    };
    if (!parsed) {
      slog.info({ actionId: action.action_id }, "memory click with a value Neo did not make; refused");
      await tell("That button is not one of mine; nothing was changed.");
      return;
    }
    const caller = userKey({ platform: "slack", workspace: teamId, user: clicker });
    if (!(await deps.access.isAllowed(caller))) {
      await tell("An admin has turned Neo off for you, so I can't do that.");
      return;
    }
    const ctx = await slackCommandContext(deps, teamId, clicker, channel ?? "", false);
    const result = await runMemoryAction(parsed, ctx, deps.commands);
    if ("refused" in result) {
      slog.info({ clicker: caller, owner: parsed.owner }, "memory click by someone else; refused");
      await tell(result.refused);
      return;
    }
    if (body.view?.type === "home") {
      await publishHome(teamId, clicker, result.view.page, result.view.note);
      return;
    }
    await respond({
      response_type: "ephemeral",
      replace_original: true,
      text: markdownToMrkdwn(pageHeading(result.view)),
      blocks: memoryBlocks(result.view, clicker),
    } as Parameters<RespondFn>[0]);
  };

  app.action<BlockAction<ButtonAction>>({ action_id: MEMORY_ACTION_ID }, async (args) => {
    await args.ack();
    // After the ack: the change and the new page must not hold Slack's 3 s.
    void onClick(args).catch((err: unknown) => slog.error({ err }, "memory click failed"));
  });
}
