/**
 * Catch-up after a new gateway session. Discord replays missed events only on RESUME; a restarted
 * process (or an invalidated session) IDENTIFYs afresh, and messages sent to Neo's conversations
 * while no session was connected are never dispatched. So the last message seen in each
 * conversation channel is kept in the store, and when a shard becomes ready the newer messages of
 * recently active channels are fetched over REST and handled like live ones (the journal drops any
 * that were already taken, by message id).
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
   * Fetch and hand to `handle`, oldest first, what each recent channel of shard `shard` got after
   * its last seen message.
   */
  run(handle: (message: Message) => Promise<void>, shard: number): Promise<number>;
}

export function createBackfill(client: Client, store: Store, now: () => number = Date.now): Backfill {
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
      const since = now() - BACKFILL_WINDOW_MS;
      // Discord sends a guild's events to shard (guild_id >> 22) % shard count, DMs to shard 0.
      const count = client.options.shardCount ?? 1;
      const ours = (guild: string | null): boolean =>
        (guild === null ? 0 : ShardClientUtil.shardIdForGuildId(guild, count)) === shard;
      // A mark of a release before (no guild) is kept until its channel says where it is: the restart
      // that deploys this one must catch up what was missed while it ran.
      const entries: Array<[string, Seen]> = [];
      for (const key of await store.keys(SEEN_PREFIX)) {
        const seen = SeenSchema.safeParse(await store.get(key)).data;
        if (seen && seen.at >= since && (seen.guild === undefined || ours(seen.guild)))
          entries.push([key.slice(SEEN_PREFIX.length), seen]);
      }
      forgetOldFloors();
      for (const entry of entries) {
        const floor = floors.get(entry[0]);
        if (floor && BigInt(floor.id) < BigInt(entry[1].id)) entry[1] = { ...entry[1], id: floor.id };
      }
      entries.sort((a, b) => b[1].at - a[1].at);
      if (entries.length > MAX_CHANNELS) {
        log.warn(
          { shard, channels: entries.length },
          `discord catch-up: ${entries.length} channels active; only the ${MAX_CHANNELS} most recent are caught up`,
        );
      }
      let handled = 0;
      for (const [channelId, seen] of entries.slice(0, MAX_CHANNELS)) {
        try {
          const channel = await client.channels.fetch(channelId);
          if (!channel?.isTextBased()) continue;
          if (seen.guild === undefined && !ours("guildId" in channel ? channel.guildId : null)) continue;
          const page = await channel.messages.fetch({ after: seen.id, limit: PAGE });
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
      if (handled > 0)
        log.info({ shard, channels: entries.length, messages: handled }, "discord catch-up done");
      return handled;
    },
  };
}
