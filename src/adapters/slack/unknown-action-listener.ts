/**
 * Clicks on buttons Neo no longer has (an old message, a renamed action): acknowledged at once,
 * inside Slack's 3 s, and the clicker is told privately, instead of Bolt's unhandled-action 404.
 * The listener matches every `action_id` except the ones other listeners own, so each click has
 * exactly one listener and one ack.
 */
import type { App, BlockAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import { log } from "../../core/log.js";
import type { SlackWorkspaces } from "./workspaces.js";

/** What the clicker of an unknown button is told (ephemeral). */
export const NO_LONGER_ACTIVE = "This button is no longer active.";

const slog = log.child({ component: "slack" });
const literal = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export function registerUnknownActions(
  app: App,
  known: readonly string[],
  workspaces: SlackWorkspaces,
  /** Prefixes of action_ids other listeners own (the memory buttons: `neo_mem_…`). */
  knownPrefixes: readonly string[] = [],
): void {
  const owned = [...known.map((k) => `${literal(k)}$`), ...knownPrefixes.map(literal)];
  const unknown = new RegExp(`^(?!(?:${owned.join("|")}))`);
  app.action<BlockAction>({ action_id: unknown }, async (args: SlackActionMiddlewareArgs<BlockAction>) => {
    const { ack, body, respond, action } = args;
    await ack();
    slog.debug({ actionId: action.action_id }, "click on an action Neo does not know; told it is inactive");
    // After the ack: a slow response_url must not hold Slack's 200.
    const tell = async (): Promise<void> => {
      if (body.response_url) {
        await respond({ response_type: "ephemeral", replace_original: false, text: NO_LONGER_ACTIVE });
        return;
      }
      const channel = body.channel?.id ?? body.container?.channel_id;
      const team = body.team?.id ?? body.user.team_id;
      if (channel && team)
        await workspaces.out(team).ephemeral({ channel, user: body.user.id, text: NO_LONGER_ACTIVE });
    };
    void tell().catch((err: unknown) =>
      slog.warn({ err }, "could not tell a clicker the button is inactive"),
    );
  });
}
