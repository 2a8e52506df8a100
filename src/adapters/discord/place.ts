/**
 * What kind of place a Discord channel is, for memory (DESIGN.md, Memory scopes; docs/security.md).
 * The rule: a DM is `dm`; a group DM and a private thread are `private`; a guild text channel (and a
 * public thread, through its parent) is `public` when the guild's @everyone role may view it, else
 * `private` (a channel only some roles or members can see). Computed from discord.js's cache
 * (`permissionsFor(guild.roles.everyone)`, overwrites included). When the permissions cannot be
 * computed the channel counts as `public`, the place shown the least memory.
 */
import { ChannelType, type GuildBasedChannel, PermissionFlagsBits, type TextBasedChannel } from "discord.js";
import type { Place, PlaceKind } from "../../core/place.js";
import { DM_WORKSPACE } from "./keys.js";

function everyoneSees(channel: GuildBasedChannel): boolean {
  const perms = channel.permissionsFor(channel.guild.roles.everyone);
  return perms ? perms.has(PermissionFlagsBits.ViewChannel) : true;
}

export function placeKindOf(channel: TextBasedChannel): PlaceKind {
  if (channel.type === ChannelType.DM) return "dm";
  if (channel.type === ChannelType.GroupDM) return "private";
  if (channel.type === ChannelType.PrivateThread) return "private";
  if (channel.isThread()) return channel.parent ? placeKindOf(channel.parent as TextBasedChannel) : "public";
  return everyoneSees(channel) ? "public" : "private";
}

export function placeOf(channel: TextBasedChannel, guildId: string | null): Place {
  return { kind: placeKindOf(channel), workspace: guildId ?? DM_WORKSPACE };
}
