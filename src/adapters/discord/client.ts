/**
 * The discord.js Client Neo runs on: the minimum intents, the partials DMs need, and the REST base
 * from `DISCORD_API_URL` (the gateway URL then comes from that API's `/gateway/bot`).
 */
import { Client, DefaultRestOptions, GatewayIntentBits, Options, Partials, RESTEvents } from "discord.js";
import { EARLIER_MESSAGES } from "../../core/conversations/index.js";
import { log } from "../../core/log.js";
import { metrics } from "../../ops/metrics.js";
import type { Store } from "../../store/types.js";
import { fleetBudgetedRequest } from "./rest-budget.js";

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

/**
 * Messages discord.js keeps per channel (its default is 200, in every channel of every guild Neo is
 * in, mention or not). Neo reads its cache for one thing: the message a reply references, which
 * arrives inside the reply's own packet; the page of earlier messages fetched when Neo joins a
 * thread enters the cache after it, so the bound leaves room for that page and a few arrivals.
 * A reference pushed out anyway is fetched (one GET), so the answer is the same.
 */
export const CACHED_MESSAGES_PER_CHANNEL = EARLIER_MESSAGES + 10;

/**
 * Users and members (per guild) discord.js keeps; its default keeps every author and mention it
 * ever saw, for the process's life. Neo reads them for names: a message's author and member arrive
 * in its own packet (cached then, newest), and a mention missing from the cache is fetched. The
 * bot's own user and member are always kept.
 */
export const CACHED_USERS = 2000;
export const CACHED_MEMBERS_PER_GUILD = 500;

/**
 * Cached messages older than this are swept (every `MESSAGE_SWEEP_S`): the per-channel bound alone
 * keeps up to CACHED_MESSAGES_PER_CHANNEL messages in every DM channel ever opened with Neo. What
 * Neo reads from the cache is fresh (a reply's reference arrives in its packet; a thread's earlier
 * page is fetched).
 */
export const MESSAGE_LIFETIME_S = 3600;
const MESSAGE_SWEEP_S = 3600;

export interface DiscordClientOptions {
  /** Where the fleet's global REST budget lives (rest-budget.ts). */
  store: Store;
  apiUrl?: string;
  /** Shard ids this process runs (discord.js ShardingManager sets them through the environment). */
  shards?: number[] | "auto";
  shardCount?: number;
}

export function createDiscordClient(opts: DiscordClientOptions): Client {
  const client = new Client({
    intents: [...NEO_INTENTS],
    // DM channels are not in the READY cache; without the Channel partial their messages are dropped.
    partials: [Partials.Channel, Partials.Message],
    makeCache: Options.cacheWithLimits({
      ...Options.DefaultMakeCacheSettings,
      MessageManager: CACHED_MESSAGES_PER_CHANNEL,
      UserManager: { maxSize: CACHED_USERS, keepOverLimit: (u) => u.id === u.client.user?.id },
      GuildMemberManager: {
        maxSize: CACHED_MEMBERS_PER_GUILD,
        keepOverLimit: (m) => m.id === m.client.user?.id,
      },
    }),
    sweepers: {
      ...Options.DefaultSweeperSettings,
      messages: { interval: MESSAGE_SWEEP_S, lifetime: MESSAGE_LIFETIME_S },
    },
    rest: {
      api: opts.apiUrl ?? DEFAULT_DISCORD_API_URL,
      makeRequest: fleetBudgetedRequest(opts.store, DefaultRestOptions.makeRequest),
    },
    // Nothing Neo sends may ping anyone; each message also sets this explicitly.
    allowedMentions: { parse: [], repliedUser: false },
    ...(opts.shards ? { shards: opts.shards } : {}),
    ...(opts.shardCount ? { shardCount: opts.shardCount } : {}),
  });
  // Every REST answer passes here; a 429 is what Discord refused (discord.js then waits it out and
  // retries). Its `rateLimited` event also fires for waits discord.js takes on its own, so not that.
  client.rest.on(RESTEvents.Response, (request, response) => {
    if (response.status !== 429) return;
    metrics.rateLimited.inc({ platform: "discord" });
    log.warn({ method: request.method, route: request.route }, "discord 429: discord.js waits it out");
  });
  return client;
}
