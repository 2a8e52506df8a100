/**
 * What kind of place a Discord channel is, for memory (DESIGN.md, Memory scopes; docs/security.md).
 * The rule: a DM is `dm`; a group DM and a private thread are `private`; a guild text channel (and a
 * public thread, through its parent) is `public` when the guild's @everyone role may view it, else
 * `private` (a channel only some roles or members can see). Computed from discord.js's cache
 * (`permissionsFor(guild.roles.everyone)`, overwrites included), which the gateway keeps current
 * (CHANNEL_UPDATE, GUILD_ROLE_UPDATE): no REST call on the answer's path. When the permissions
 * cannot be computed the channel reads as `public`, the place shown the least memory, `guessed`:
 * what its turn teaches is kept as learned in a private place (core/place.ts, `learnedIn`).
 */
import { ChannelType, type GuildBasedChannel, PermissionFlagsBits, type TextBasedChannel } from "discord.js";
import type { Place, PlaceKind } from "../../core/place.js";
import { DM_WORKSPACE } from "./keys.js";

/** Whether @everyone may view the channel; undefined when the cache cannot tell. */
function everyoneSees(channel: GuildBasedChannel): boolean | undefined {
  return channel.permissionsFor(channel.guild.roles.everyone)?.has(PermissionFlagsBits.ViewChannel);
}

/** The channel's kind; undefined when the cache cannot tell (a thread whose parent is not cached). */
export function placeKindOf(channel: TextBasedChannel): PlaceKind | undefined {
  if (channel.type === ChannelType.DM) return "dm";
  if (channel.type === ChannelType.GroupDM) return "private";
  if (channel.type === ChannelType.PrivateThread) return "private";
  if (channel.isThread()) return channel.parent ? placeKindOf(channel.parent as TextBasedChannel) : undefined;
  const sees = everyoneSees(channel);
  return sees === undefined ? undefined : sees ? "public" : "private";
}

/** A guild channel Neo cannot classify: read as public, what it teaches kept as private. */
export const guessedPlace = (guildId: string): Place => ({
  kind: "public",
  workspace: guildId,
  guessed: true,
});

export function placeOf(channel: TextBasedChannel, guildId: string | null): Place {
  const kind = placeKindOf(channel);
  const workspace = guildId ?? DM_WORKSPACE;
  return kind ? { kind, workspace } : guessedPlace(workspace);
}
