/**
 * Catch-up after a new gateway session. Discord replays missed events only on RESUME; a restarted
 * process (or an invalidated session) IDENTIFYs afresh, and messages sent while no session was
 * connected are never dispatched. So when a shard becomes ready, the channels that may hold such
 * messages are fetched over REST and what they got is handled like live messages (the journal drops
 * any that were already taken, by message id).
 *
 * Which channels: Discord's GUILD_CREATE (sent for each of the shard's guilds before the shard is
 * ready) lists every channel and active thread with its `last_message_id`, which discord.js keeps
 * as `lastMessageId`. The last message handled in each channel is kept in the store (its mark), and
 * a listed channel is fetched only when its last message is newer: after its mark, or, never
 * marked, after the moment the shard was last known receiving (`shard-alive.ts`; nothing unmarked
 * is fetched when that is unknown, e.g. the first start). A channel with nothing new costs nothing.
 * The channels GUILD_CREATE does not list (DMs, on shard 0; a thread since archived) are fetched
 * after their mark, as is a mark written before marks named their guild (fetched to learn it).
 *
 * A live message can be handled before the catch-up reads its channel's mark (a restarted shard's
 * first messages race its catch-up) and move the mark past what was missed. So the mark a live
 * message replaced is kept in memory for a while (`FLOOR_MS`), and the catch-up starts from the older
 * of the two: what it fetches again is dropped by the journal.
 *
 * Every shard's marks are in the one store, and a shard's catch-up takes only its own: those of the
 * guilds Discord routes to it, and DMs on shard 0. Counted over the whole fleet, the marks of the
 * other shards (two thirds of them with 3 shards) pushed the channels of the restarted shard out of
 * the `MAX_CHANNELS` most recent, and cost a REST call each for a channel this process cannot see.
 */
import { type Client, type Message, ShardClientUtil } from "discord.js";
import { z } from "zod";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import { ALIVE_MARGIN_MS, createShardAlive } from "./shard-alive.js";

const SEEN_PREFIX = "discord:seen:";
/** Channels idle longer than this are not caught up (an answer hours late helps nobody). */
export const BACKFILL_WINDOW_MS = 6 * 60 * 60 * 1000;
/** At most this many channels per shard's catch-up, most recently active first (a cut is logged). */
const MAX_CHANNELS = 500;
/** One page per channel: a gap longer than this is cut, with a warning. */
const PAGE = 100;
/** How long a replaced mark is remembered: a shard's catch-up follows its connection within seconds. */
const FLOOR_MS = 60_000;

/**
 * A channel's mark: the last message handled there, when, and its guild (null: a DM; absent: written
 * by a release before marks named it, so the channel's guild is learnt when it is fetched).
 */
const SeenSchema = z.object({ id: z.string(), at: z.number(), guild: z.string().nullable().optional() });
type Seen = z.infer<typeof SeenSchema>;

export interface Backfill {
  /** `message` is being handled (registered before any await, so older ones are never skipped). */
  begin(message: Message): void;
  /** `message` is done; when `handled`, the catch-up of its channel and of `alsoChannelId` may start after it. */
  done(message: Message, handled: boolean, alsoChannelId?: string): Promise<void>;
  /**
   * Fetch and hand to `handle`, oldest first, what the channels of shard `shard` got while no
   * session received them; then record the shard as alive (and keep doing so until `stop`).
   */
  run(handle: (message: Message) => Promise<void>, shard: number): Promise<number>;
  stop(): void;
}

/** Discord's epoch (2015-01-01), the origin of a snowflake's timestamp (its bits above the 22nd). */
const DISCORD_EPOCH = 1_420_070_400_000n;
const timeOf = (id: string): number => Number((BigInt(id) >> 22n) + DISCORD_EPOCH);
/** The smallest snowflake of millisecond `ms`. */
const snowflakeAt = (ms: number): string => ((BigInt(Math.floor(ms)) - DISCORD_EPOCH) << 22n).toString();

/** A channel to fetch: after which message, how recently active (the cap keeps the most recent), and
 * whether its guild is still to be learnt (a mark without one). */
interface Gap {
  channelId: string;
  after: string;
  recent: number;
  learn: boolean;
}

export interface BackfillOptions {
  now?: () => number;
  /** When the oldest message this process holds but has not handled yet was created (a store outage). */
  oldestWaiting?: () => number | undefined;
}

export function createBackfill(client: Client, store: Store, o: BackfillOptions = {}): Backfill {
  const now = o.now ?? Date.now;
  /** Per channel, the ids being handled: the mark never passes one of them (a later message can
   * finish first, and a crash then must not skip the earlier one). */
  const inflight = new Map<string, Set<string>>();
  /**
   * Per channel, the mark this process first replaced within the last FLOOR_MS, with when
   * (insertion order is age order: a refreshed floor is re-inserted).
   */
  const floors = new Map<string, Seen & { replacedAt: number }>();
  const forgetOldFloors = (): void => {
    for (const [channelId, f] of floors) {
      if (f.replacedAt > now() - FLOOR_MS) break;
      floors.delete(channelId);
    }
  };

  const alive = createShardAlive(client, store, {
    now,
    oldestHeld: () => {
      let oldest = o.oldestWaiting?.();
      for (const ids of inflight.values())
        for (const id of ids) oldest = Math.min(oldest ?? Number.POSITIVE_INFINITY, timeOf(id));
      return oldest;
    },
  });

  const mark = async (channelId: string, messageId: string, guild: string | null): Promise<void> => {
    let id = BigInt(messageId);
    for (const other of inflight.get(channelId) ?? []) {
      if (BigInt(other) <= id) id = BigInt(other) - 1n;
    }
    const key = `${SEEN_PREFIX}${channelId}`;
    const prev = SeenSchema.safeParse(await store.get(key)).data;
    if (prev && BigInt(prev.id) >= id) return;
    forgetOldFloors();
    if (prev && !floors.has(channelId)) floors.set(channelId, { ...prev, replacedAt: now() });
    await store.set<Seen>(key, { id: id.toString(), at: now(), guild }, BACKFILL_WINDOW_MS);
  };

  /** The marks of the last `BACKFILL_WINDOW_MS`, each lowered to the mark a live message replaced. */
  const readMarks = async (): Promise<Map<string, Seen>> => {
    const since = now() - BACKFILL_WINDOW_MS;
    forgetOldFloors();
    const marks = new Map<string, Seen>();
    for (const key of await store.keys(SEEN_PREFIX)) {
      const seen = SeenSchema.safeParse(await store.get(key)).data;
      if (!seen || seen.at < since) continue;
      const channelId = key.slice(SEEN_PREFIX.length);
      const floor = floors.get(channelId);
      marks.set(channelId, floor && BigInt(floor.id) < BigInt(seen.id) ? { ...seen, id: floor.id } : seen);
    }
    return marks;
  };

  return {
    begin(message) {
      const set = inflight.get(message.channelId) ?? new Set<string>();
      set.add(message.id);
      inflight.set(message.channelId, set);
    },

    async done(message, handled, alsoChannelId) {
      const set = inflight.get(message.channelId);
      set?.delete(message.id);
      if (set?.size === 0) inflight.delete(message.channelId);
      if (!handled) return;
      const guild = message.guildId ?? null;
      await mark(message.channelId, message.id, guild);
      if (alsoChannelId && alsoChannelId !== message.channelId) await mark(alsoChannelId, message.id, guild);
    },

    async run(handle, shard) {
      // Discord sends a guild's events to shard (guild_id >> 22) % shard count, DMs to shard 0.
      const count = client.options.shardCount ?? 1;
      const ours = (guild: string | null): boolean =>
        (guild === null ? 0 : ShardClientUtil.shardIdForGuildId(guild, count)) === shard;
      const aliveAt = await alive.read(shard);
      const unmarkedAfter = aliveAt === undefined ? undefined : snowflakeAt(aliveAt - ALIVE_MARGIN_MS);
      const marks = await readMarks();
      const gaps: Gap[] = [];
      // The channels and threads the shard's GUILD_CREATEs listed, with their last message.
      const listed = new Set<string>();
      for (const guild of client.guilds.cache.values()) {
        if (guild.shardId !== shard) continue;
        for (const channel of guild.channels.cache.values()) {
          if (!channel.isTextBased()) continue;
          listed.add(channel.id);
          const last = channel.lastMessageId;
          const after = marks.get(channel.id)?.id ?? unmarkedAfter;
          if (last && after !== undefined && BigInt(last) > BigInt(after))
            gaps.push({ channelId: channel.id, after, recent: timeOf(last), learn: false });
        }
      }
      // Marked channels not listed: DMs, threads since archived, marks that do not name their guild.
      for (const [channelId, seen] of marks) {
        if (listed.has(channelId)) continue;
        const cached = client.channels.cache.get(channelId);
        const guild = cached && "guildId" in cached ? cached.guildId : seen.guild;
        if (guild !== undefined && !ours(guild)) continue;
        gaps.push({ channelId, after: seen.id, recent: seen.at, learn: guild === undefined });
      }
      gaps.sort((a, b) => b.recent - a.recent);
      if (gaps.length > MAX_CHANNELS) {
        log.warn(
          { shard, channels: gaps.length },
          `discord catch-up: ${gaps.length} channels to fetch; only the ${MAX_CHANNELS} most recent are caught up`,
        );
      }
      let handled = 0;
      for (const { channelId, after, learn } of gaps.slice(0, MAX_CHANNELS)) {
        try {
          const channel = await client.channels.fetch(channelId);
          if (!channel?.isTextBased()) continue;
          if (learn && !ours("guildId" in channel ? channel.guildId : null)) continue;
          const page = await channel.messages.fetch({ after, limit: PAGE });
          if (page.size === PAGE) {
            log.warn(
              { channelId },
              `discord catch-up: more than ${PAGE} messages missed; only ${PAGE} are caught up`,
            );
          }
          const missed = [...page.values()].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
          for (const m of missed) await handle(m);
          handled += missed.length;
        } catch (err) {
          log.warn({ err, channelId }, "discord catch-up failed for a channel");
        }
      }
      if (handled > 0) log.info({ shard, channels: gaps.length, messages: handled }, "discord catch-up done");
      // Only now: a process that dies during the catch-up leaves the older time for the next one.
      await alive.start(shard);
      return handled;
    },

    stop() {
      alive.stop();
    },
  };
}
