/**
 * The workspaces Neo answers in, each with its own bot identity, bot token and Web API calls.
 * Single-token mode has one (`SLACK_BOT_TOKEN`, identified by `auth.test`); OAuth mode has one per
 * installation in the store. Every event, command, click and conversation is served by the
 * workspace it came from, so each workspace is answered with its own token.
 */
import type { webApi } from "@slack/bolt";
import type { Store } from "../../store/types.js";
import type { SlackRateRules } from "./outbound/rules.js";
import { createSlackOutbound, type SlackOutbound } from "./outbound.js";
import { createSlackChannels, type SlackChannels } from "./places.js";
import { createRateGate, type RateGate } from "./rate-gate.js";
import { createSlackUsers, type SlackUsers } from "./users.js";

/** Who Neo is in a workspace: the team, its bot user and bot ids. */
export interface SlackIdentity {
  teamId: string;
  botUserId: string;
  botId?: string;
}

/** A workspace's bot: who it is there, and its token. */
export interface WorkspaceBot {
  identity: SlackIdentity;
  token: string;
}

export interface SlackWorkspaces {
  /** Who Neo is in workspace `teamId`; undefined when Neo is not installed there. */
  identity(teamId: string): Promise<SlackIdentity | undefined>;
  /** The bot token of `teamId` (for its file downloads). */
  token(teamId: string): Promise<string>;
  /** Web API calls in `teamId`, with its token (looked up when a call leaves the queue). */
  out(teamId: string): SlackOutbound;
  /** Display names and admin flags of `teamId`'s users (kept in the store). */
  users(teamId: string): SlackUsers;
  /** What `teamId`'s channels are: DM, private or public (memory scopes), and their names. */
  channels(teamId: string): SlackChannels;
  /** Drop what is kept of a workspace in memory (after it uninstalled Neo). */
  forget(teamId: string): void;
  /** Stop every workspace's background lookups (shutdown). */
  stop(): void;
  /** Every workspace's calls queue here (shutdown waits for them). */
  gate: RateGate;
}

export class SlackNotInstalledError extends Error {
  readonly code = "SLACK_NOT_INSTALLED";
}

/** How long a workspace's bot (identity, token) is used before it is read again. */
const BOT_TTL_MS = 60_000;

export function createSlackWorkspaces(o: {
  client: webApi.WebClient;
  rules: SlackRateRules;
  /** Where what is known of channels and users is kept, for every instance. */
  store: Store;
  /** The bot of `teamId`, or undefined when Neo is not installed there. */
  bot: (teamId: string) => Promise<WorkspaceBot | undefined>;
}): SlackWorkspaces {
  const gate = createRateGate({ store: o.store });
  const bots = new Map<string, { bot: WorkspaceBot; at: number }>();
  const outs = new Map<string, { out: SlackOutbound; users: SlackUsers; channels: SlackChannels }>();

  const botOf = async (teamId: string): Promise<WorkspaceBot | undefined> => {
    const hit = bots.get(teamId);
    if (hit && Date.now() - hit.at < BOT_TTL_MS) return hit.bot;
    const bot = await o.bot(teamId);
    if (bot) bots.set(teamId, { bot, at: Date.now() });
    else bots.delete(teamId);
    return bot;
  };

  const tokenOf = async (teamId: string): Promise<string> => {
    const bot = await botOf(teamId);
    if (!bot) throw new SlackNotInstalledError(`Neo is not installed in Slack workspace ${teamId}`);
    return bot.token;
  };

  const calls = (teamId: string) => {
    let hit = outs.get(teamId);
    if (!hit) {
      const out = createSlackOutbound(o.client, {
        rules: o.rules,
        gate,
        team: teamId,
        token: () => tokenOf(teamId),
      });
      hit = {
        out,
        users: createSlackUsers({
          store: o.store,
          team: teamId,
          rule: o.rules.usersInfo,
          usersInfo: (user, opts) => out.usersInfo(user, opts),
        }),
        channels: createSlackChannels({
          store: o.store,
          team: teamId,
          rule: o.rules.conversationsInfo,
          channelInfo: (channel, opts) => out.channelInfo(channel, opts),
        }),
      };
      outs.set(teamId, hit);
    }
    return hit;
  };

  return {
    identity: async (teamId) => (await botOf(teamId))?.identity,
    token: tokenOf,
    out: (teamId) => calls(teamId).out,
    users: (teamId) => calls(teamId).users,
    channels: (teamId) => calls(teamId).channels,
    forget: (teamId) => {
      bots.delete(teamId);
      const hit = outs.get(teamId);
      hit?.users.stop();
      hit?.channels.stop();
      outs.delete(teamId);
    },
    stop: () => {
      for (const hit of outs.values()) {
        hit.users.stop();
        hit.channels.stop();
      }
    },
    gate,
  };
}
