/**
 * Single-token mode's one bot (`SLACK_BOT_TOKEN`), identified once by `auth.test`, also for turns
 * resumed before start; a failed `auth.test` is tried again at the next ask.
 */
import type { App } from "@slack/bolt";
import type { WorkspaceBot } from "../workspaces.js";
import { SlackConfigError } from "./options.js";

export function createSingleBot(app: App, token: string): () => Promise<WorkspaceBot> {
  let single: Promise<WorkspaceBot> | undefined;
  return (): Promise<WorkspaceBot> => {
    single ??= app.client.auth.test({ token }).then((auth) => {
      if (!auth.team_id || !auth.user_id)
        throw new SlackConfigError("SLACK_BOT_TOKEN: auth.test returned no team/user");
      return {
        identity: {
          teamId: auth.team_id,
          botUserId: auth.user_id,
          ...(auth.bot_id ? { botId: auth.bot_id } : {}),
        },
        token,
      };
    });
    single.catch(() => {
      single = undefined; // a failed auth.test is tried again next time
    });
    return single;
  };
}
