/**
 * Scale-out: two Neo processes, each a shard group of discord.js (shard 0 and shard 1 of 2), each
 * with its own conversations service and store client on one shared Redis. Discord sends a guild's
 * events to one shard and DMs to shard 0: each message is answered exactly once, by its shard.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDiscordAdapter, type DiscordAdapter } from "../../src/adapters/discord/index.js";
import { createAdminCheck } from "../../src/core/access/admin.js";
import { createAccessPolicy } from "../../src/core/access/policy.js";
import { createAuditLog } from "../../src/core/approvals/audit.js";
import { createApprovalBroker } from "../../src/core/approvals/broker.js";
import { createConversations } from "../../src/core/conversations/create-conversations.js";
import type { ConversationsService } from "../../src/core/conversations/types.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { LIMITS } from "../conversations/harness.js";
import { type FakeDiscord, startFakeDiscord, wrote } from "../fakes/discord/fake-discord.js";
import { shardOf } from "../fakes/discord/gateway.js";
import { type ConversationDeps, createConversationDeps } from "../fixtures/conversation-deps.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { testCommandDeps } from "./support/harness.js";

const redis = await probeRedis();

interface Proc {
  store: Store;
  conversations: ConversationsService;
  adapter: DiscordAdapter;
}

async function startProcess(
  fake: FakeDiscord,
  deps: ConversationDeps,
  prefix: string,
  shard: number,
): Promise<Proc> {
  const store = await createStore({ redisUrl: redis.url, dataDir: "unused", prefix });
  const access = createAccessPolicy({ store, isAdmin: createAdminCheck([]) });
  const broker = createApprovalBroker({
    instanceId: "test-instance",
    store,
    audit: createAuditLog(store),
    ttlMs: 60_000,
    pollMs: 20,
  });
  let adapter: DiscordAdapter | undefined;
  const conversations = createConversations({
    store,
    newAgent: deps.newAgent,
    io: (key) => adapter!.io(key),
    instanceId: `shard-${shard}`,
    limits: LIMITS,
  });
  const commands = testCommandDeps(store, conversations, broker, access);
  adapter = createDiscordAdapter({
    config: { DISCORD_TOKEN: fake.token, DISCORD_API_URL: fake.apiBase },
    conversations,
    broker,
    access,
    commands,
    store,
    editIntervalMs: 0,
    shards: { ids: [shard], count: 2 },
  });
  await conversations.start();
  await adapter.start();
  return { store, conversations, adapter };
}

describe.skipIf(!redis.ok)("Discord: sharded across two processes sharing Redis", () => {
  let fake: FakeDiscord | undefined;
  let ep: ScriptedOpenAI | undefined;
  let deps: ConversationDeps | undefined;
  const procs: Proc[] = [];
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      await p.adapter.stop();
      await p.conversations.shutdown(1000);
      await p.store.close();
    }
    await deps?.close();
    await fake?.close();
    await ep?.close();
  });

  it("each shard identifies with its pair; guild and DM messages are answered once, by the owning shard", async () => {
    fake = await startFakeDiscord();
    ep = await startScriptedOpenAI([]);
    ep.fallback((req) => ({ text: `answer ${req.index}` }));
    deps = await createConversationDeps({
      endpointUrl: ep.url,
      gateDir: mkdtempSync(join(tmpdir(), "neo-shard-")),
    });
    const prefix = uniquePrefix("discord-shards");
    procs.push(await startProcess(fake, deps, prefix, 0));
    procs.push(await startProcess(fake, deps, prefix, 1));
    expect(fake.gateway.identifies.map((i) => i.shard).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    const owner = shardOf(fake.guildId, 2);
    expect(procs.map((p) => p.adapter.client.guilds.cache.has(fake!.guildId))).toEqual([
      owner === 0,
      owner === 1,
    ]);

    const mention = await fake.say(fake.alice, fake.channel, "hello from the guild", { mentionBot: true });
    await fake.waitForCall(
      wrote((t) => t.startsWith("answer"), mention.id),
      "guild answer",
    );
    const dm = fake.dm(fake.bob);
    await fake.say(fake.bob, dm, "hello in private");
    await fake.waitForCall(
      (c) => c.method === "POST" && c.path === `/channels/${dm.id}/messages`,
      "DM answer",
    );
    // A follow-up in the thread, on the owning shard, reads Neo's thread membership from Redis.
    await fake.say(fake.carol, fake.channelById(mention.id)!, "and a follow-up");
    await fake.waitForCall(
      (c) =>
        c.method === "POST" &&
        c.path === `/channels/${mention.id}/messages` &&
        c.seq > 0 &&
        fake!.channelMessages(mention.id).filter((m) => m.author.id === fake!.bot.id).length === 2,
      "follow-up answer",
    );

    expect(ep.requests).toHaveLength(3);
    expect(fake.calls.filter((c) => c.path.endsWith("/threads"))).toHaveLength(1);
    expect(fake.channelMessages(dm.id).filter((m) => m.author.id === fake!.bot.id)).toHaveLength(1);
    expect(fake.channelMessages(mention.id).filter((m) => m.author.id === fake!.bot.id)).toHaveLength(2);
  });
});
