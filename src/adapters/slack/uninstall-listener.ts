/**
 * A workspace that uninstalls Neo (`app_uninstalled`), or revokes its bot token
 * (`tokens_revoked` naming bot tokens), loses its installation and everything Neo kept about it:
 * conversations, memory, caps, access and settings (`deleteWorkspaceData`). OAuth mode only.
 */
import { log } from "../../core/log.js";
import { deleteWorkspaceData } from "../../core/workspace-data.js";
import type { Store } from "../../store/types.js";
import type { SlackEvents } from "./event-router.js";
import type { SlackInstallations } from "./installations.js";
import type { SlackWorkspaces } from "./workspaces.js";

export interface UninstallDeps {
  installations: SlackInstallations;
  workspaces: SlackWorkspaces;
  store: Store;
}

const slog = log.child({ component: "slack" });

function teamOf(body: unknown): string | undefined {
  const b = body as { team_id?: unknown };
  return typeof b.team_id === "string" ? b.team_id : undefined;
}

export function registerUninstall(events: SlackEvents, deps: UninstallDeps): void {
  const forget = async (teamId: string, why: string): Promise<void> => {
    await deps.installations.remove(teamId);
    deps.workspaces.forget(teamId);
    const keys = await deleteWorkspaceData(deps.store, "slack", teamId);
    slog.info({ team: teamId, keys, why }, "slack workspace removed");
  };
  events.on("app_uninstalled", async ({ body }) => {
    const team = teamOf(body);
    if (team) await forget(team, "app_uninstalled");
  });
  events.on("tokens_revoked", async ({ body, event }) => {
    const team = teamOf(body);
    // Only the bot's token matters to Neo; revoked user tokens change nothing.
    if (team && (event.tokens.bot ?? []).length > 0) await forget(team, "tokens_revoked");
  });
}
