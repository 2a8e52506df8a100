/**
 * Discord's global rate limit (50 requests a second per bot) is spent by the whole fleet: three
 * shards as three processes run them (three discord.js Clients, each with its own REST queue and its
 * own store connection to one Redis; here in one test process, in separate processes in
 * `npm run bench:fleet`) post at once, and the fake Discord, which counts every bot request
 * per window across all clients and refuses beyond the limit, sees no window over it and refuses
 * nothing. A global 429 seen by one shard holds the others off for its Retry-After.
 */
import { type Client, RESTEvents, Routes } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { createDiscordClient } from "../../src/adapters/discord/client.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/fake-discord.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";

const redis = await probeRedis();

describe.skipIf(!redis.ok)("Discord: one global REST budget for three shards", () => {
  let fake: FakeDiscord | undefined;
  const stores: Store[] = [];
  const clients: Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.destroy();
    for (const s of stores.splice(0)) await s.close();
    await fake?.close();
  });

  /** Three shards of one bot, each its own Client and store connection, on one Redis prefix. */
  const shards = async (f: FakeDiscord): Promise<Client[]> => {
    const prefix = uniquePrefix("discord-budget");
    for (let shard = 0; shard < 3; shard++) {
      const store = await createStore({ redisUrl: redis.url, dataDir: "unused", prefix });
      stores.push(store);
      const c = createDiscordClient({ store, apiUrl: f.apiBase, shards: [shard], shardCount: 3 });
      c.rest.setToken(f.token);
      clients.push(c);
    }
    return clients;
  };

  it("3 shards posting a burst of 150 messages into 5 channels: no window over 50 requests a second, nothing refused", async () => {
    fake = await startFakeDiscord();
    const f = fake;
    // Five channels: discord.js queues each channel's posts apart (a route bucket per channel), so
    // every shard sends as fast as its own REST queue lets it; only the global limit binds.
    const channels = f.addGuild(5).channels;
    const all = await shards(f);
    const posts = all.flatMap((c, shard) =>
      Array.from({ length: 50 }, (_, i) =>
        c.rest.post(Routes.channelMessages(channels[i % 5]!.id), {
          body: { content: `shard ${shard} #${i}` },
        }),
      ),
    );
    await Promise.all(posts);
    expect(channels.map((c) => f.channelMessages(c.id).length)).toEqual([30, 30, 30, 30, 30]);
    expect(f.globalRefusals()).toEqual([]);
    expect(f.busiestGlobalWindow()).toBeLessThanOrEqual(50);
  });

  it("a global 429 seen by one shard holds every shard until its Retry-After ends", async () => {
    fake = await startFakeDiscord();
    const f = fake;
    const [a, b] = await shards(f);
    const refused = f.rateLimit("POST", new RegExp(`^/channels/${f.channel.id}/messages$`), 1, 1);
    refused.global = true;
    // Shard a's answer is a global 429: once a has seen it (after its budget step), b posts.
    const seen = new Promise<void>((resolve) =>
      a!.rest.on(RESTEvents.Response, (_req, res) => {
        if (res.status === 429) resolve();
      }),
    );
    const first = a!.rest.post(Routes.channelMessages(f.channel.id), { body: { content: "first" } });
    await seen;
    const limited = f.globalRefusals()[0]!;
    // b's own REST queue saw nothing, yet it waits for the block.
    await b!.rest.post(Routes.channelMessages(f.channel.id), { body: { content: "second" } });
    await first;
    const fromB = f.calls.find((c) => (c.body as { content?: string }).content === "second");
    expect(fromB!.arrived - limited.arrived).toBeGreaterThanOrEqual(1000);
    expect(
      f
        .channelMessages(f.channel.id)
        .map((m) => m.content)
        .sort(),
    ).toEqual(["first", "second"]);
  });
});
