import { Events } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { createDiscordClient, NEO_INTENTS } from "../../src/adapters/discord/client.js";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/fake-discord.js";
import { memoryStore } from "../support/memory-store.js";

describe("fake Discord", () => {
  let fake: FakeDiscord | undefined;
  let destroy: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await destroy?.();
    await fake?.close();
  });

  it("a real discord.js Client logs in: gateway from /gateway/bot, IDENTIFY with Neo's intents, READY with the guild", async () => {
    fake = await startFakeDiscord({ heartbeatIntervalMs: 200 });
    const client = createDiscordClient({ apiUrl: fake.apiBase, store: await memoryStore() });
    destroy = () => client.destroy();
    const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
    await client.login(fake.token);
    await ready;

    expect(client.user?.id).toBe(fake.bot.id);
    expect(client.guilds.cache.get(fake.guildId)?.channels.cache.has(fake.channel.id)).toBe(true);
    const intents = NEO_INTENTS.reduce((a, b) => a | b, 0);
    expect(fake.gateway.identifies).toEqual([{ intents, shard: [0, 1] }]);
    expect(fake.calls.some((c) => c.method === "GET" && c.path === "/gateway/bot" && c.authed)).toBe(true);

    // Heartbeats are acknowledged: wait until the client has measured a ping.
    for (let i = 0; i < 100 && client.ws.ping < 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(fake.gateway.heartbeats).toBeGreaterThan(0);
    expect(client.ws.ping).toBeGreaterThanOrEqual(0);
  });

  it("a modal (callback type 9) beyond Discord's limits is refused as Discord does (400, 50035); one within is shown", async () => {
    fake = await startFakeDiscord();
    const row = (label: string) => ({ type: 1, components: [{ type: 4, style: 1, custom_id: "f", label }] });
    const show = async (data: Record<string, unknown>) => {
      const token = await fake!.slash({ user: fake!.alice, sub: "ask" });
      const res = await fetch(`${fake!.apiBase}/v10/interactions/1/${token}/callback`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: 9, data }),
      });
      return {
        status: res.status,
        body: res.status === 204 ? null : await res.json(),
        shown: fake!.modalShown(token),
      };
    };
    const ok = { title: "t".repeat(45), custom_id: "c".repeat(100), components: [row("l".repeat(45))] };
    expect((await show(ok)).shown).toEqual(ok);
    for (const bad of [
      { ...ok, title: "t".repeat(46) },
      { ...ok, custom_id: "c".repeat(101) },
      { ...ok, components: Array.from({ length: 6 }, () => row("x")) },
      { ...ok, components: [row("l".repeat(46))] },
    ]) {
      const r = await show(bad);
      expect([r.status, (r.body as { code: number }).code, r.shown]).toEqual([400, 50035, undefined]);
    }
  });

  it("with routeLimits, a channel's message bucket (5 per 5 s) is in every answer's headers and a sixth write is refused per route", async () => {
    fake = await startFakeDiscord({ routeLimits: true });
    const post = (channel: string, content: string) =>
      fetch(`${fake!.apiBase}/v10/channels/${channel}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bot ${fake!.token}` },
        body: JSON.stringify({ content }),
      });
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await post(fake.channel.id, `m${i}`));
    expect(answers.map((r) => [r.status, r.headers.get("x-ratelimit-remaining")])).toEqual([
      [200, "4"],
      [200, "3"],
      [200, "2"],
      [200, "1"],
      [200, "0"],
      [429, "0"],
    ]);
    const refused = answers[5]!;
    expect(refused.headers.get("x-ratelimit-scope")).toBe("user");
    expect(refused.headers.get("x-ratelimit-bucket")).toBe("message-write");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await refused.json()) as { global: boolean }).global).toBe(false);
    expect(fake.routeRefusals().map((r) => r.key)).toEqual([`message-write:${fake.channel.id}`]);
    // Another channel has its own bucket.
    const other = fake.addGuild(1).channels[0]!;
    expect((await post(other.id, "elsewhere")).status).toBe(200);
    expect(fake.channelMessages(fake.channel.id)).toHaveLength(5);
  });
});
