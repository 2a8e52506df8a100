/**
 * Slack's own change events keep what Neo knows of channels and users current (places.ts,
 * users.ts), on every instance through the store:
 * - every message event says its channel's kind (`channel_type`), a conversion included: the
 *   `channel_convert_to_private` / `channel_convert_to_public` message subtypes carry the new one
 *   (https://docs.slack.dev/reference/events/message/channel_convert_to_private/ and
 *   …/channel_convert_to_public/, delivered through the `message.channels` / `message.groups`
 *   subscriptions Neo has);
 * - `channel_rename` / `group_rename` the new name ({ channel: { id, name, created } },
 *   https://api.slack.com/events/channel_rename, https://api.slack.com/events/group_rename);
 * - `channel_deleted` / `group_deleted` that a channel is gone ({ channel: "C…" });
 * - `member_joined_channel` for Neo itself: it was invited, so the channel is looked up in the
 *   background before anyone mentions it (its `channel_type` letter says nothing of privacy since
 *   March 2021: https://api.slack.com/events/member_joined_channel);
 * - `user_change` the whole user object (https://api.slack.com/events/user_change).
 * An ordinary message teaches its channel's kind once per instance (what was taught is remembered,
 * bounded), so a busy channel costs no store write per message; a conversion always writes.
 */
import type { AllMiddlewareArgs } from "@slack/bolt";
import { z } from "zod";
import { log } from "../../core/log.js";
import type { SlackEvents } from "./event-router.js";
import { userInfoOf } from "./outbound/lookups.js";
import { kindOfChannelType } from "./places.js";
import type { SlackWorkspaces } from "./workspaces.js";

const teamOf = (body: unknown): string | undefined => {
  const t = (body as { team_id?: unknown } | undefined)?.team_id;
  return typeof t === "string" ? t : undefined;
};

/** Slack's `ts` / `event_ts` ("1730984822.596869", seconds) as ms; now when absent. */
export const msOfTs = (ts: string | undefined): number => {
  const s = Number(ts);
  return ts && Number.isFinite(s) ? Math.round(s * 1000) : Date.now();
};

const messageSchema = z.object({
  channel: z.string().min(1),
  channel_type: z.string().optional(),
  subtype: z.string().optional(),
  ts: z.string().optional(),
});
const renameSchema = z.object({
  channel: z.object({ id: z.string().min(1), name: z.string().min(1) }),
  event_ts: z.string().optional(),
});
const channelIdSchema = z.object({ channel: z.string().min(1) });
const joinedSchema = z.object({ user: z.string().min(1), channel: z.string().min(1) });
const userChangeSchema = z.object({
  user: z
    .object({
      id: z.string().min(1),
      name: z.string().optional(),
      real_name: z.string().optional(),
      profile: z.object({ display_name: z.string().optional(), real_name: z.string().optional() }).optional(),
      is_admin: z.boolean().optional(),
      is_owner: z.boolean().optional(),
      is_primary_owner: z.boolean().optional(),
      is_bot: z.boolean().optional(),
    })
    .passthrough(),
  event_ts: z.string().optional(),
});

const CONVERSIONS = new Set(["channel_convert_to_private", "channel_convert_to_public"]);
/** Channels whose kind this instance taught from ordinary messages, remembered at most. */
const TAUGHT_MAX = 5000;

const slog = log.child({ component: "slack" });

export function registerDirectoryEvents(events: SlackEvents, workspaces: SlackWorkspaces): void {
  const taught = new Map<string, string>();

  events.on("message", async ({ event, body }: AllMiddlewareArgs & { event: unknown; body: unknown }) => {
    const team = teamOf(body);
    const m = messageSchema.safeParse(event);
    if (!team || !m.success) return;
    const kind = kindOfChannelType(m.data.channel_type);
    if (!kind || kind === "dm") return;
    const memo = `${team}/${m.data.channel}`;
    const conversion = CONVERSIONS.has(m.data.subtype ?? "");
    if (!conversion && taught.get(memo) === kind) return;
    await workspaces.channels(team).learn(m.data.channel, { kind }, msOfTs(m.data.ts));
    taught.delete(memo);
    if (taught.size >= TAUGHT_MAX) taught.delete(taught.keys().next().value as string);
    taught.set(memo, kind);
    if (conversion) slog.info({ team, channel: m.data.channel, kind }, "slack channel converted");
  });

  const renamed = async ({ event, body }: { event: unknown; body: unknown }) => {
    const team = teamOf(body);
    const e = renameSchema.safeParse(event);
    if (!team || !e.success) return;
    await workspaces
      .channels(team)
      .learn(e.data.channel.id, { name: e.data.channel.name }, msOfTs(e.data.event_ts));
  };
  events.on("channel_rename", renamed);
  events.on("group_rename", renamed);

  const deleted = async ({ event, body }: { event: unknown; body: unknown }) => {
    const team = teamOf(body);
    const e = channelIdSchema.safeParse(event);
    if (team && e.success) await workspaces.channels(team).forget(e.data.channel);
  };
  events.on("channel_deleted", deleted);
  events.on("group_deleted", deleted);

  events.on("member_joined_channel", async ({ event, body }) => {
    const team = teamOf(body);
    const e = joinedSchema.safeParse(event);
    if (!team || !e.success) return;
    const me = await workspaces.identity(team);
    if (me && e.data.user === me.botUserId) workspaces.channels(team).refresh(e.data.channel);
  });

  events.on("user_change", async ({ event, body }) => {
    const team = teamOf(body);
    const e = userChangeSchema.safeParse(event);
    if (!team || !e.success) return;
    const u = e.data.user;
    // Dated by the event (`updated` is whole seconds: a lookup made in the same second would win).
    await workspaces.users(team).learn(userInfoOf(u.id, u), msOfTs(e.data.event_ts));
  });
}
