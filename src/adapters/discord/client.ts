/**
 * The discord.js Client Neo runs on: the minimum intents, the partials DMs need, and the REST base
 * from `DISCORD_API_URL` (the gateway URL then comes from that API's `/gateway/bot`).
 */
import { Client, GatewayIntentBits, Partials } from "discord.js";

/** Discord's own API base; `DISCORD_API_URL` replaces it for proxies and local fakes. */
export const DEFAULT_DISCORD_API_URL = "https://discord.com/api";

/**
 * Guilds (channel/thread cache), GuildMessages and DirectMessages (the messages themselves) and the
 * privileged MessageContent (follow-ups in Neo's threads carry no mention, so arrive empty without it).
 */
export const NEO_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.MessageContent,
] as const;

export interface DiscordClientOptions {
  apiUrl?: string;
  /** Shard ids this process runs (discord.js ShardingManager sets them through the environment). */
  shards?: number[] | "auto";
  shardCount?: number;
}

export function createDiscordClient(opts: DiscordClientOptions = {}): Client {
  return new Client({
    intents: [...NEO_INTENTS],
    // DM channels are not in the READY cache; without the Channel partial their messages are dropped.
    partials: [Partials.Channel, Partials.Message],
    rest: { api: opts.apiUrl ?? DEFAULT_DISCORD_API_URL },
    // Nothing Neo sends may ping anyone; each message also sets this explicitly.
    allowedMentions: { parse: [], repliedUser: false },
    ...(opts.shards ? { shards: opts.shards } : {}),
    ...(opts.shardCount ? { shardCount: opts.shardCount } : {}),
  });
}
