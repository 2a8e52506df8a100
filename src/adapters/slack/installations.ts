/**
 * Slack OAuth installations (Bolt's `InstallationStore`) kept in Neo's store, so every instance on
 * one Redis sees every workspace that installed Neo. One key per workspace (per organization for an
 * org-wide Enterprise Grid install): `slack:installation:<id>`. Bot tokens are registered with the
 * logger so they are redacted like configured secrets.
 */
import type { Installation, InstallationQuery, InstallationStore } from "@slack/bolt";
import { registerSecrets } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import type { WorkspaceBot } from "./workspaces.js";

type AnyInstallation = Installation<"v1" | "v2", boolean>;

/** Bolt's install paths, served on the HTTP receiver (`NEO_HTTP_PORT`). */
export const INSTALL_PATH = "/slack/install";
export const REDIRECT_PATH = "/slack/oauth_redirect";

/** The bot scopes an install asks for: the same as `slack-app-manifest.yaml` (a test compares them). */
export const SLACK_BOT_SCOPES = [
  "app_mentions:read",
  "im:history",
  "im:read",
  "im:write",
  "chat:write",
  "reactions:write",
  "users:read",
  "channels:history",
  "groups:history",
  "mpim:history",
  "mpim:read",
  "channels:read",
  "groups:read",
  "commands",
  "files:read",
  "files:write",
  "assistant:write",
] as const;

const keyOf = (id: string) => `slack:installation:${id}`;

function idOfInstallation(i: AnyInstallation): string {
  const id = i.isEnterpriseInstall ? i.enterprise?.id : i.team?.id;
  if (!id) throw new Error("Slack installation without a team or enterprise id");
  return id;
}

function idOfQuery(q: InstallationQuery<boolean>): string {
  const id = q.isEnterpriseInstall ? q.enterpriseId : q.teamId;
  if (!id) throw new Error("Slack installation query without a team or enterprise id");
  return id;
}

export interface SlackInstallations extends InstallationStore {
  /** The bot installed in workspace `teamId`, if any. */
  bot(teamId: string): Promise<WorkspaceBot | undefined>;
  /** Remove the installation of `id` (team, or enterprise for an org-wide install). */
  remove(id: string): Promise<void>;
}

export function createSlackInstallations(store: Store): SlackInstallations {
  const read = async (id: string): Promise<AnyInstallation | undefined> => {
    const i = await store.get<AnyInstallation>(keyOf(id));
    if (i?.bot?.token) registerSecrets([i.bot.token]);
    return i;
  };
  return {
    storeInstallation: async (installation) => {
      if (installation.bot?.token) registerSecrets([installation.bot.token]);
      await store.set(keyOf(idOfInstallation(installation as AnyInstallation)), installation);
    },
    fetchInstallation: async (query) => {
      const i = await read(idOfQuery(query));
      if (!i) throw new Error(`no Slack installation for ${idOfQuery(query)}`);
      return i as never;
    },
    deleteInstallation: async (query) => {
      await store.delete(keyOf(idOfQuery(query)));
    },
    bot: async (teamId) => {
      const i = await read(teamId);
      if (!i?.bot?.token || !i.bot.userId) return undefined;
      return {
        identity: { teamId, botUserId: i.bot.userId, ...(i.bot.id ? { botId: i.bot.id } : {}) },
        token: i.bot.token,
      };
    },
    remove: async (id) => {
      await store.delete(keyOf(id));
    },
  };
}
