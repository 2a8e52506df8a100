/**
 * The documented setup, for real: discord.js's `ShardingManager` spawns Neo's entry (src/main.ts
 * under tsx) as 2 shards in 2 child processes, against the fake Discord gateway serving 2 shards
 * (IDENTIFY with [id, 2], a guild's events on shard (guild_id >> 22) % 2, a guild on each, DMs on
 * shard 0) and one Redis. A guild message on each shard and a DM are each answered once.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, ShardingManager } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../app/support/bot-process.js";
import { type FakeDiscord, startFakeDiscord, wrote } from "../fakes/discord/fake-discord.js";
import { shardOf } from "../fakes/discord/gateway.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

const redis = await probeRedis();

describe.skipIf(!redis.ok)("Discord: ShardingManager with 2 shards in 2 processes", () => {
  let fake: FakeDiscord | undefined;
  let ep: ScriptedOpenAI | undefined;
  let manager: ShardingManager | undefined;
  const output: string[] = [];
  afterEach(async () => {
    const exits = [...(manager?.shards.values() ?? [])].map((s) => {
      const p = s.process;
      if (!p || p.exitCode !== null) return Promise.resolve();
      const exited = new Promise<void>((resolve) => p.once("exit", () => resolve()));
      s.kill();
      return exited;
    });
    await Promise.all(exits);
    await fake?.close();
    await ep?.close();
  });

  it("answers a guild message on each shard and a DM (shard 0)", { timeout: 60_000 }, async () => {
    fake = await startFakeDiscord({ secondGuild: true });
    ep = await startScriptedOpenAI([]);
    ep.fallback((req) => ({ text: `answer ${req.index}` }));
    const env = {
      NEO_ENV_FILE: "off",
      OPENAI_BASE_URL: ep.url,
      DISCORD_API_URL: fake.apiBase,
      REDIS_URL: redis.url,
      NEO_KEY_PREFIX: uniquePrefix("shard-manager"),
      NEO_DATA_DIR: mkdtempSync(join(tmpdir(), "neo-shard-manager-")),
      NEO_MCP_MANIFEST: "test/fixtures/empty-manifest.json",
      // Each shard adds its id: two ports in a row.
      NEO_HTTP_PORT: String(await freePort(2)),
      NEO_METRICS_PORT: "0",
    };
    manager = new ShardingManager(join(process.cwd(), "src/main.ts"), {
      token: fake.token,
      totalShards: 2,
      mode: "process",
      respawn: false,
      silent: true,
      execArgv: ["--import", "tsx"],
    });
    manager.on("shardCreate", (shard) => {
      // discord.js types the shard's env as unknown; it is the child's environment object.
      Object.assign(shard.env as NodeJS.ProcessEnv, env);
      // Silent children pipe their output: read it (a full pipe would stall the child), keep it for a failure.
      shard.on(
        "spawn",
        (child: { stdout?: NodeJS.ReadableStream | null; stderr?: NodeJS.ReadableStream | null }) => {
          child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
          child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
        },
      );
    });
    await manager.spawn({ amount: 2, delay: 0, timeout: 45_000 }).catch((err: unknown) => {
      throw new Error(`shards did not get ready: ${String(err)}\n${output.join("").slice(-4000)}`);
    });

    expect(fake.gateway.identifies.map((i) => i.shard).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    const guilds = [fake.guildId, fake.otherGuildId!];
    expect(guilds.map((g) => shardOf(g, 2)).sort()).toEqual([0, 1]);
    // Each shard's process has its own guild, and only it.
    const held = await manager.broadcastEval((c: Client) => [...c.guilds.cache.keys()]);
    expect(held).toEqual([0, 1].map((shard) => guilds.filter((g) => shardOf(g, 2) === shard)));

    // Neo answers a guild mention in a thread started on the message (its id).
    const threads: string[] = [];
    for (const channel of [fake.channel, fake.otherChannel!]) {
      const mention = await fake.say(fake.alice, channel, `hello in ${channel.guild_id}`, {
        mentionBot: true,
      });
      await fake.waitForCall(
        wrote((t) => t.startsWith("answer"), mention.id),
        `answer in ${channel.guild_id}`,
      );
    }
    const dm = fake.dm(fake.bob);
    await fake.say(fake.bob, dm, "hello in private");
    await fake.waitForCall(
      (c) => c.method === "POST" && c.path === `/channels/${dm.id}/messages`,
      "DM answer",
    );

    // One turn each (the memory write-back's calls aside), none answered twice.
    expect(ep.requests.filter((r) => r.purpose === "turn")).toHaveLength(3);
    for (const at of [...threads, dm.id])
      expect(
        fake.channelMessages(at).filter((m) => m.author.id === fake!.bot.id),
        at,
      ).toHaveLength(1);
  });
});
