/**
 * A restarted shard picks the channels it catches up from what Discord's GUILD_CREATE lists: every
 * channel and active thread with its `last_message_id`. A mention in a channel Neo never handled a
 * message in (or in a thread opened while the shard was down) has no catch-up mark, and was lost;
 * a marked channel with nothing after its mark cost a REST fetch at every restart all the same.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, Events, type Message } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { type Backfill, createBackfill } from "../../src/adapters/discord/backfill.js";
import { createDiscordClient } from "../../src/adapters/discord/client.js";
import { createFileStore } from "../../src/store/file-store.js";
import type { Store } from "../../src/store/types.js";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/fake-discord.js";
import { shardOf } from "../fakes/discord/gateway.js";
import { type ChannelPayload, message } from "../fakes/discord/payloads.js";

const DISCORD_EPOCH = 1_420_070_400_000n;
/** A snowflake dated `agoMs` before now (a message sent then). */
const sentAgo = (agoMs: number): string => ((BigInt(Date.now() - agoMs) - DISCORD_EPOCH) << 22n).toString();

describe("Discord catch-up of the channels GUILD_CREATE lists", () => {
  let fake: FakeDiscord | undefined;
  const clients: Client[] = [];
  const backfills: Backfill[] = [];
  let store: Store | undefined;
  afterEach(async () => {
    for (const b of backfills.splice(0)) b.stop();
    for (const c of clients.splice(0)) await c.destroy();
    await store?.close();
    await fake?.close();
  });

  /** A process holding `shard` of `count` logs in and runs its catch-up; what it handed on. */
  const restart = async (
    f: FakeDiscord,
    s: Store,
    shard: number,
    count: number,
    before?: (b: Backfill) => void,
  ) => {
    const client = createDiscordClient({ apiUrl: f.apiBase, store: s, shards: [shard], shardCount: count });
    clients.push(client);
    const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
    await client.login(f.token);
    await ready;
    const backfill = createBackfill(client, s);
    backfills.push(backfill);
    before?.(backfill);
    const caught: string[] = [];
    await backfill.run(async (m) => {
      caught.push(m.id);
    }, shard);
    return { client, caught };
  };
  const fetchesOf = (f: FakeDiscord, channelId: string) =>
    f.calls.filter((c) => c.method === "GET" && c.path.startsWith(`/channels/${channelId}/messages`));

  it("catches up a mention in a channel never marked, and in a thread opened, while the shard was down", async () => {
    fake = await startFakeDiscord();
    const f = fake;
    const other = f.addGuild(1);
    const shard = shardOf(f.guildId, 2);
    expect(shardOf(other.id, 2)).not.toBe(shard);
    store = await createFileStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-catch-up-")), prefix: "neo:" });
    const say = (channel: ChannelPayload, content: string, id?: string) => {
      const m = message({
        channel,
        author: f.alice,
        content: `<@${f.bot.id}> ${content}`,
        mentions: [f.bot],
        id,
      });
      f.store(channel.id, m);
      return m;
    };
    // Talk from a minute before the first start, in a channel Neo never answered in.
    say(f.channel, "a minute ago", sentAgo(60_000));

    // First start ever: nothing tells since when the shard was down, so nothing unmarked is fetched.
    const first = await restart(f, store, shard, 2);
    expect(first.caught).toEqual([]);
    expect(fetchesOf(f, f.channel.id)).toEqual([]);
    await first.client.destroy();

    // While the shard is down: a mention in the channel, a thread opened with a mention in it, and
    // a message in the other shard's guild.
    const missed = say(f.channel, "while the shard was down");
    const thread = await f.openThread(f.bob, "opened while down");
    const inThread = say(thread, "in the new thread");
    say(other.channels[0]!, "the other shard's");

    const second = await restart(f, store, shard, 2);
    expect([...second.caught].sort()).toEqual([missed.id, inThread.id].sort());
    // The other shard's guild is not this shard's to catch up (nor listed to it).
    expect(fetchesOf(f, other.channels[0]!.id)).toEqual([]);
  }, 60_000);

  it("still catches up a message that was being handled when the shard was last recorded alive", async () => {
    fake = await startFakeDiscord();
    const f = fake;
    store = await createFileStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-catch-up-")), prefix: "neo:" });
    // Sent a minute ago and delivered, but its handling (the store not answering) never finished.
    const stuck = message({
      channel: f.channel,
      author: f.alice,
      content: `<@${f.bot.id}> stuck`,
      mentions: [f.bot],
      id: sentAgo(60_000),
    });
    f.store(f.channel.id, stuck);
    // The process that held it records the shard alive (once its own catch-up is done), then dies.
    const held = { id: stuck.id, channelId: f.channel.id, guildId: f.guildId } as unknown as Message;
    const dying = await restart(f, store, 0, 1, (b) => b.begin(held));
    expect(dying.caught).toEqual([]);
    await dying.client.destroy();

    const { caught } = await restart(f, store, 0, 1);
    expect(caught).toEqual([stuck.id]);
  }, 60_000);

  it("does not fetch a marked channel whose last message is its mark", async () => {
    fake = await startFakeDiscord();
    const f = fake;
    const quiet = f.channel;
    const busy = f.addGuild(1).channels[0]!;
    store = await createFileStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-catch-up-")), prefix: "neo:" });
    const before = createBackfill({} as Client, store);
    const handled = (channel: ChannelPayload) => {
      const m = message({ channel, author: f.alice, content: "handled before the crash" });
      f.store(channel.id, m);
      return before.done(
        { id: m.id, channelId: channel.id, guildId: channel.guild_id } as unknown as Message,
        true,
      );
    };
    await handled(quiet);
    await handled(busy);
    const missed = message({ channel: busy, author: f.alice, content: "while the shard was down" });
    f.store(busy.id, missed);

    const { caught } = await restart(f, store, 0, 1);
    expect(caught).toEqual([missed.id]);
    expect(fetchesOf(f, quiet.id)).toEqual([]);
  }, 60_000);
});
