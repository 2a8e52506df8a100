/**
 * Who a Slack user is (display name, workspace admin/owner), from `users.info`, and what a channel
 * is called, from `conversations.info`; both cached briefly.
 */
import { createLookupCache } from "./lookup-cache.js";
import type { UserInfo } from "./outbound/lookups.js";
import type { SlackOutbound } from "./outbound.js";

export interface SlackUsers {
  get(userId: string): Promise<UserInfo>;
}

export function createSlackUsers(out: SlackOutbound, ttlMs = 10 * 60_000, max = 5000): SlackUsers {
  return { get: createLookupCache((id) => out.usersInfo(id), ttlMs, max) };
}

export interface SlackChannels {
  /** The channel's name (without `#`). */
  name(channelId: string): Promise<string>;
}

export function createSlackChannels(out: SlackOutbound, ttlMs = 10 * 60_000, max = 5000): SlackChannels {
  return { name: createLookupCache(async (id) => (await out.channelInfo(id)).name, ttlMs, max) };
}
