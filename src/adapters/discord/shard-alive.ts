/**
 * When each shard was last known to be receiving, kept in the store (shared by the fleet) so the
 * process that takes a shard over after a crash knows from when its channels may hold messages no
 * session received. Written only while the shard's session is ready, and never later than the
 * oldest message this process still holds (being handled, or waiting for the store): every message
 * created before the recorded time minus `ALIVE_MARGIN_MS` was delivered and done with.
 */
import { type Client, Status } from "discord.js";
import { z } from "zod";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";

const ALIVE_PREFIX = "discord:alive:";
/** How often the mark is refreshed: what a catch-up fetches again (the journal drops it) at most. */
export const ALIVE_EVERY_MS = 15_000;
/** A message reaches its shard within this of being created (gateway delay, a busy event loop). */
export const ALIVE_MARGIN_MS = 10_000;
/** Kept as long as the catch-up looks back: after that a restarted shard catches up nothing unmarked. */
const ALIVE_TTL_MS = 6 * 60 * 60 * 1000;

export interface ShardAlive {
  /** When `shard` was last known receiving (by whichever process held it), if within the TTL. */
  read(shard: number): Promise<number | undefined>;
  /** Record `shard` as alive now, and again every `ALIVE_EVERY_MS` while its session is ready. */
  start(shard: number): Promise<void>;
  stop(): void;
}

export function createShardAlive(
  client: Client,
  store: Store,
  o: { now: () => number; oldestHeld: () => number | undefined },
): ShardAlive {
  const shards = new Set<number>();
  let timer: NodeJS.Timeout | undefined;

  const write = async (shard: number): Promise<void> => {
    if (client.ws.shards.get(shard)?.status !== Status.Ready) return;
    const held = o.oldestHeld();
    const at = held === undefined ? o.now() : Math.min(o.now(), held);
    await store.set(`${ALIVE_PREFIX}${shard}`, at, ALIVE_TTL_MS);
  };
  const tick = async (): Promise<void> => {
    for (const shard of shards) {
      try {
        await write(shard);
      } catch (err) {
        log.debug({ err, shard }, "discord: shard alive mark not written");
      }
    }
  };

  return {
    async read(shard) {
      return z.number().safeParse(await store.get(`${ALIVE_PREFIX}${shard}`)).data;
    },
    async start(shard) {
      shards.add(shard);
      timer ??= setInterval(() => void tick(), ALIVE_EVERY_MS).unref();
      await write(shard);
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      shards.clear();
    },
  };
}
