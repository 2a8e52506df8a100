/**
 * discord.js's message cache stays bounded: a real Client (Neo's options) logged in to the fake
 * Discord keeps at most CACHED_MESSAGES_PER_CHANNEL messages of a busy channel (discord.js's default
 * is 200 per channel, in every channel Neo can see), and a reply's reference, which arrives inside
 * the reply's packet, is still read from the cache without a request.
 */
import { type Client, Events, type Message } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { CACHED_MESSAGES_PER_CHANNEL, createDiscordClient } from "../../src/adapters/discord/client.js";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/fake-discord.js";

describe("discord.js message cache", () => {
  let fake: FakeDiscord | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.destroy();
    await fake?.close();
  });

  it("keeps at most CACHED_MESSAGES_PER_CHANNEL of a busy channel; a reply's reference comes from the packet", async () => {
    fake = await startFakeDiscord();
    const c = createDiscordClient({ apiUrl: fake.apiBase });
    client = c;
    const ready = new Promise<void>((resolve) => c.once(Events.ClientReady, () => resolve()));
    await c.login(fake.token);
    await ready;

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
});
