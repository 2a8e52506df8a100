/**
 * Every shard's catch-up marks are in the one store, and a restarted shard catches up at most its
 * `MAX_CHANNELS` (500) most recently active channels. Counted over the whole fleet, the other
 * shards' channels pushed the restarted shard's own out of those 500 (seen in `npm run bench:fleet`
 * at 2,000 messages over 500 channels: each 3-process kill row lost the 4 mentions sent to the
 * killed shard while it was down; their channels were last active 90 s before, and the 500 most
 * recent marks of the fleet spanned 45 s). A shard's catch-up takes its own guilds' channels only.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, Events, type Message } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { createBackfill } from "../../src/adapters/discord/backfill.js";
import { createDiscordClient } from "../../src/adapters/discord/client.js";
import { createFileStore } from "../../src/store/file-store.js";
import type { Store } from "../../src/store/types.js";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/fake-discord.js";
import { shardOf } from "../fakes/discord/gateway.js";
import { message, snowflake } from "../fakes/discord/payloads.js";

/** What `begin`/`done` read of a message. */
const asMessage = (id: string, channelId: string, guildId: string) =>
  ({ id, channelId, guildId }) as unknown as Message;

describe("Discord catch-up of one shard of several", () => {
  let fake: FakeDiscord | undefined;
  let client: Client | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await client?.destroy();
    await store?.close();
    await fake?.close();
  });

  /** Shard `shard` of 2 comes back on `s`: the messages its catch-up hands on, in order. */
  const catchUp = async (f: FakeDiscord, s: Store, shard: number): Promise<string[]> => {
    const c = createDiscordClient({ apiUrl: f.apiBase, store: s, shards: [shard], shardCount: 2 });
    client = c;
    const ready = new Promise<void>((resolve) => c.once(Events.ClientReady, () => resolve()));
    await c.login(f.token);
    await ready;
    const caught: string[] = [];
    await createBackfill(c, s).run(async (m) => {
      caught.push(m.id);
    }, shard);
    return caught;
  };

  it("catches up its own channel however many channels of other shards were active since", async () => {
    fake = await startFakeDiscord();
    const f = fake;
    // A second guild, on the other of 2 shards.
    const other = f.addGuild(1).id;
    const shard = shardOf(f.guildId, 2);
    expect(shardOf(other, 2)).not.toBe(shard);
    store = await createFileStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-catch-up-")), prefix: "neo:" });
    const said = (content: string) => {
      const m = message({ channel: f.channel, author: f.alice, content });
      f.store(f.channel.id, m);
      return m;
    };

    // Before the crash: this shard handled a message in its channel, then the other shard handled
    // one in each of 600 channels of its guild (more recently).
    let at = Date.now() - 60_000;
    const before = createBackfill({} as Client, store, { now: () => at++ });
    const handled = said("before the crash");
    await before.done(asMessage(handled.id, f.channel.id, f.guildId), true);
    const foreign = Array.from({ length: 600 }, () => snowflake());
    for (const channelId of foreign) await before.done(asMessage(snowflake(), channelId, other), true);
    const missed = said("while the shard was down");

    const caught = await catchUp(f, store, shard);

    expect(caught).toEqual([missed.id]);
    // Nothing asked about the other shard's channels.
    const asked = f.calls.filter((c) => foreign.some((id) => c.path.startsWith(`/channels/${id}`)));
    expect(asked.length).toBe(0);
  }, 60_000);

  it("still catches up from marks written before marks named their guild (the upgrade's own restart)", async () => {
    fake = await startFakeDiscord();
    const f = fake;
    const otherGuild = f.addGuild(1);
    const shard = shardOf(f.guildId, 2);
    store = await createFileStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-catch-up-")), prefix: "neo:" });
    const s = store;
    // Marks as the release before wrote them (`discord:seen:<channel>` = { id, at }, no guild), one in
    // this shard's channel and one in the other shard's; a message was missed in each.
    const legacyMark = async (channelId: string) => {
      const m = message({
        channel: channelId === f.channel.id ? f.channel : otherGuild.channels[0]!,
        author: f.alice,
        content: "before",
      });
      f.store(channelId, m);
      await s.set(`discord:seen:${channelId}`, { id: m.id, at: Date.now() - 30_000 }, 60_000);
    };
    await legacyMark(f.channel.id);
    await legacyMark(otherGuild.channels[0]!.id);
    const missed = message({ channel: f.channel, author: f.alice, content: "during the deploy" });
    f.store(f.channel.id, missed);
    const foreignMissed = message({ channel: otherGuild.channels[0]!, author: f.alice, content: "theirs" });
    f.store(otherGuild.channels[0]!.id, foreignMissed);

    const caught = await catchUp(f, store, shard);

    // Its own channel's missed message, and not the other shard's (that shard catches it up).
    expect(caught).toEqual([missed.id]);
  }, 60_000);
});
