/**
 * Discord API payload builders for the fake: snowflakes, users, the guild, channels, messages and
 * interactions, shaped like the v10 API so a real discord.js Client accepts them.
 */

const DISCORD_EPOCH = 1_420_070_400_000n;
let increment = 0n;

/** A fresh, increasing snowflake (timestamp bits from the clock, so discord.js dates are sane). */
export function snowflake(): string {
  increment = (increment + 1n) & 0xfffn;
  return (((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | (1n << 17n) | increment).toString();
}

export interface FakeUser {
  id: string;
  username: string;
  global_name: string | null;
  discriminator: string;
  avatar: null;
  bot?: boolean;
}

export function user(username: string, opts: { bot?: boolean; globalName?: string } = {}): FakeUser {
  return {
    id: snowflake(),
    username,
    global_name: opts.globalName ?? null,
    discriminator: "0",
    avatar: null,
    ...(opts.bot ? { bot: true } : {}),
  };
}

export interface FakeMember {
  user: FakeUser;
  nick: string | null;
  roles: string[];
  joined_at: string;
  deaf: boolean;
  mute: boolean;
  flags: number;
}

export function member(u: FakeUser, roles: string[] = [], nick: string | null = null): FakeMember {
  return { user: u, nick, roles, joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0 };
}

export type ChannelPayload = Record<string, unknown> & { id: string; type: number };

export function textChannel(guildId: string, name: string): ChannelPayload {
  return {
    id: snowflake(),
    type: 0,
    guild_id: guildId,
    name,
    position: 0,
    permission_overwrites: [],
    nsfw: false,
    last_message_id: null,
  };
}

export function threadChannel(
  guildId: string,
  parentId: string,
  ownerId: string,
  name: string,
  id = snowflake(),
): ChannelPayload {
  return {
    id,
    type: 11,
    guild_id: guildId,
    parent_id: parentId,
    owner_id: ownerId,
    name,
    message_count: 0,
    member_count: 1,
    rate_limit_per_user: 0,
    flags: 0,
    last_message_id: null,
    thread_metadata: {
      archived: false,
      auto_archive_duration: 1440,
      archive_timestamp: new Date().toISOString(),
      locked: false,
    },
  };
}

export function dmChannel(recipient: FakeUser): ChannelPayload {
  return { id: snowflake(), type: 1, recipients: [recipient], last_message_id: null };
}

export type MessagePayload = Record<string, unknown> & {
  id: string;
  channel_id: string;
  content: string;
  author: FakeUser;
};

export interface MessageOptions {
  channel: ChannelPayload;
  author: FakeUser;
  content: string;
  member?: FakeMember;
  mentions?: FakeUser[];
  referenced?: MessagePayload;
  id?: string;
  extra?: Record<string, unknown>;
}

export function message(o: MessageOptions): MessagePayload {
  const guildId = o.channel.guild_id as string | undefined;
  const { user: _u, ...memberWithoutUser } = o.member ?? member(o.author);
  return {
    id: o.id ?? snowflake(),
    channel_id: o.channel.id,
    ...(guildId ? { guild_id: guildId, member: memberWithoutUser } : {}),
    channel_type: o.channel.type,
    author: o.author,
    content: o.content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: (o.mentions ?? []).map((m) => ({ ...m })),
    mention_roles: [],
    attachments: [],
    embeds: [],
    components: [],
    pinned: false,
    type: o.referenced ? 19 : 0,
    flags: 0,
    ...(o.referenced
      ? {
          message_reference: {
            message_id: o.referenced.id,
            channel_id: o.referenced.channel_id,
            guild_id: guildId,
          },
          referenced_message: o.referenced,
        }
      : {}),
    ...o.extra,
  };
}

export function role(
  id: string,
  name: string,
  permissions: bigint,
  position: number,
): Record<string, unknown> {
  const flags = { color: 0, hoist: false, managed: false, mentionable: false, flags: 0 };
  return { id, name, permissions: String(permissions), position, ...flags };
}

/** A full GUILD_CREATE payload; threads among `channels` go to `threads`. */
export function guildPayload(g: {
  id: string;
  ownerId: string;
  roles: Record<string, unknown>[];
  channels: ChannelPayload[];
  members: FakeMember[];
}): Record<string, unknown> {
  return {
    id: g.id,
    name: "Fake Guild",
    icon: null,
    owner_id: g.ownerId,
    unavailable: false,
    member_count: g.members.length,
    large: false,
    features: [],
    emojis: [],
    stickers: [],
    roles: g.roles,
    channels: g.channels.filter((c) => c.type !== 11),
    threads: g.channels.filter((c) => c.type === 11),
    members: g.members,
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
    joined_at: new Date().toISOString(),
    preferred_locale: "en-US",
    system_channel_flags: 0,
    premium_tier: 0,
    nsfw_level: 0,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    mfa_level: 0,
  };
}
