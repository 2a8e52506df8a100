/**
 * discord.js's caches stay bounded: a real Client (Neo's options) logged in to the fake Discord
 * keeps at most CACHED_MESSAGES_PER_CHANNEL messages of a busy channel (discord.js's default is 200
 * per channel, in every channel Neo can see), and a reply's reference, which arrives inside the
 * reply's packet, is still read from the cache without a request. Users and guild members are kept
 * up to CACHED_USERS and CACHED_MEMBERS_PER_GUILD (discord.js keeps every one it ever saw), the
 * newest author's name still read from the cache; old messages are swept (DM channels included).
 */
import { type Client, Events, type Message } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  CACHED_MEMBERS_PER_GUILD,
  CACHED_MESSAGES_PER_CHANNEL,
  CACHED_USERS,
  createDiscordClient,
  MESSAGE_LIFETIME_S,
} from "../../src/adapters/discord/client.js";
import { speakerName } from "../../src/adapters/discord/context.js";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/fake-discord.js";
import { user } from "../fakes/discord/payloads.js";
import { memoryStore } from "../support/memory-store.js";

describe("discord.js message cache", () => {
  let fake: FakeDiscord | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.destroy();
    await fake?.close();
  });

  /** The fake Discord and a client with Neo's options logged in to it (both closed after the test). */
  const loggedIn = async (): Promise<{ fake: FakeDiscord; c: Client }> => {
    const f = await startFakeDiscord();
    fake = f;
    const c = createDiscordClient({ apiUrl: f.apiBase, store: await memoryStore() });
    client = c;
    const ready = new Promise<void>((resolve) => c.once(Events.ClientReady, () => resolve()));
    await c.login(f.token);
    await ready;
    return { fake: f, c };
  };

  it("keeps at most CACHED_MESSAGES_PER_CHANNEL of a busy channel; a reply's reference comes from the packet", async () => {
    const { fake, c } = await loggedIn();

    const sent = 3 * CACHED_MESSAGES_PER_CHANNEL;
    const seen: Message[] = [];
    const allSeen = new Promise<void>((resolve) =>
      c.on(Events.MessageCreate, (m) => {
        seen.push(m);
        if (seen.length === sent + 1) resolve();
      }),
    );
    let last = await fake.say(fake.bob, fake.channel, "chatter 0");
    for (let i = 1; i < sent; i++) last = await fake.say(fake.bob, fake.channel, `chatter ${i}`);
    await fake.say(fake.alice, fake.channel, "about that", { mentionBot: true, referenced: last });
    await allSeen;

    const channel = c.channels.cache.get(fake.channel.id);
    if (!channel?.isTextBased()) throw new Error("the fake's channel is not in the cache");
    expect(channel.messages.cache.size).toBe(CACHED_MESSAGES_PER_CHANNEL);
    expect(channel.messages.cache.has(last.id)).toBe(true);

    const reply = seen[seen.length - 1]!;
    const gets = () => fake!.calls.filter((call) => call.method === "GET" && call.path.includes(last.id));
    const ref = await reply.fetchReference();
    expect(ref.content).toBe(`chatter ${sent - 1}`);
    expect(gets()).toEqual([]);
  });

  it("keeps users and members bounded over many distinct people, the newest with their names; sweeps old messages", async () => {
    const { fake, c } = await loggedIn();

    const people = CACHED_USERS + 500;
    const dms = 50;
    let seen = 0;
    let last: Message | undefined;
    const allSeen = new Promise<void>((resolve) =>
      c.on(Events.MessageCreate, (m) => {
        last = m;
        if (++seen === people + dms) resolve();
      }),
    );
    for (let i = 0; i < people - 1; i++) await fake.say(user(`person${i}`), fake.channel, `hello ${i}`);
    const newest = user("newest", { globalName: "Newest Global" });
    fake.addUnlistedMember(newest, "Newest Nick");
    await fake.say(newest, fake.channel, "hello from the newest");
    for (let i = 0; i < dms; i++) {
      const who = user(`dm${i}`);
      await fake.say(who, fake.dm(who), `hi ${i}`);
    }
    await allSeen;

    const guild = c.guilds.cache.get(fake.guildId)!;
    // discord.js kept every author (and member) it saw: people + dms + the bot and the fake's own.
    expect(c.users.cache.size).toBeLessThanOrEqual(CACHED_USERS);
    expect(guild.members.cache.size).toBeLessThanOrEqual(CACHED_MEMBERS_PER_GUILD);
    expect(c.users.cache.has(c.user!.id)).toBe(true);
    // The newest guild author is still cached: their member name is read without a request.
    const newestMessage = fake.channelMessages(fake.channel.id).at(-1)!;
    const cachedChannel = c.channels.cache.get(fake.channel.id);
    if (!cachedChannel?.isTextBased()) throw new Error("the fake's channel is not in the cache");
    expect(speakerName(cachedChannel.messages.cache.get(newestMessage.id)!)).toBe("Newest Nick");
    expect(last?.author.username).toBe(`dm${dms - 1}`);

    // Messages older than the lifetime are swept, in every channel, DMs included.
    expect(c.sweepers.options.messages).toMatchObject({ lifetime: MESSAGE_LIFETIME_S });
    expect(c.sweepers.intervals.messages).not.toBeNull();
  });
});
