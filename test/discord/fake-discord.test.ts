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
});
