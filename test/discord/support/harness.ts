/**
 * End-to-end rig: a real discord.js Client (inside the Discord adapter) logged in to the fake
 * Discord; the real conversations layer, real agent loop against the scripted OpenAI endpoint, the
 * real MCP gate server over stdio (to hold a turn mid-tool), the real approval broker and access
 * policy, the real `/neo` command layer, and the embedded file store.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDiscordAdapter, type DiscordAdapter } from "../../../src/adapters/discord/index.js";
import { connectionCommands } from "../../../src/app/command-deps.js";
import { createAdminCheck } from "../../../src/core/access/admin.js";
import { type AccessPolicy, createAccessPolicy } from "../../../src/core/access/policy.js";
import { createAuditLog } from "../../../src/core/approvals/audit.js";
import { type ApprovalBroker, createApprovalBroker } from "../../../src/core/approvals/broker.js";
import { createSpendCaps, type SpendCaps } from "../../../src/core/approvals/caps.js";
import { createChannelSettings } from "../../../src/core/channels/index.js";
import type { CommandDeps } from "../../../src/core/commands/index.js";
import { createConversations } from "../../../src/core/conversations/create-conversations.js";
import type { ConversationsService } from "../../../src/core/conversations/types.js";
import { createFileIntake, DEFAULT_FILE_LIMITS, type FileLimits } from "../../../src/core/files/index.js";
import type { ServerSpecInput } from "../../../src/core/tools/manifest.js";
import type { OAuthConnections } from "../../../src/core/tools/oauth/sign-in-types.js";
import { eraseUser } from "../../../src/core/user-data.js";
import type { Memory } from "../../../src/memory/memory.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/types.js";
import { LIMITS } from "../../conversations/harness.js";
import {
  type FakeDiscord,
  type FakeDiscordOptions,
  startFakeDiscord,
} from "../../fakes/discord/fake-discord.js";
import type { MessagePayload } from "../../fakes/discord/payloads.js";
import { type ConversationDeps, createConversationDeps } from "../../fixtures/conversation-deps.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../../support/scripted-openai.js";
import { channelCommands, NO_CHANNELS, NO_USAGE, usageCommands } from "../../support/usage-commands.js";

export interface Rig {
  fake: FakeDiscord;
  ep: ScriptedOpenAI;
  store: Store;
  conversations: ConversationsService;
  broker: ApprovalBroker;
  access: AccessPolicy;
  /** The spend caps the broker reserves on Approve. */
  caps: SpendCaps;
  adapter: DiscordAdapter;
  dir: string;
  /** User keys whose memory `/neo forget` wiped. */
  forgotten: string[];
  /** With `memory`: the real memory the loop uses. */
  memory?: Memory;
  /** A new Client and adapter (empty caches) on the same store and conversations: a restart. */
  restartAdapter(): Promise<void>;
  /** Let a held `gate__wait_for_gate(name)` call finish. */
  openGate(name: string): void;
  close(): Promise<void>;
}

export interface RigOptions {
  fake?: FakeDiscordOptions;
  approvalTtlMs?: number;
  /** Gap per call between updates of an answer being written (default 0 here; the adapter's is 1,500 ms). */
  draftIntervalMs?: number;
  /** NEO_ADMIN_USER_IDS, built from the fake's (fresh) user ids. */
  adminIds?: (fake: FakeDiscord) => string[];
  /** NEO_ANSWER_BOTS, built from the fake's (fresh) user ids. */
  answerBots?: (fake: FakeDiscord) => string[];
  /** Model config over the defaults (e.g. `NEO_MODEL_PRICES`). */
  env?: Record<string, string>;
  /** `NEO_BUDGET_USD_DAILY`: each user's daily USD budget (counted in the store). */
  budgetUsd?: number;
  /** File intake limits over the defaults (e.g. `vision: true`). */
  files?: Partial<FileLimits>;
  /** Real memory (and `memory_recall`) over the store; `/neo memory` lists it. */
  memory?: boolean;
  /** A Redis store under this key prefix instead of a file store (keys deleted on close). */
  redis?: { url: string; prefix: string };
  /** More MCP servers beside the gate (e.g. `{ chart: fixture("chart") }`). */
  servers?: Record<string, ServerSpecInput>;
  /** Sign-ins of `servers`' `"auth": "oauth"` ones (surface, each turn's check, `/neo connections`). */
  oauth?: OAuthConnections;
  /** Another rig's fake Discord (a restart of Neo against the same guild); left open on close. */
  reuseFake?: FakeDiscord;
  /** What the conversations layer writes through (e.g. `crash-store.ts`: a process that dies at a write). */
  conversationStore?: (store: Store) => Store;
}

export async function startRig(opts: RigOptions = {}): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), "neo-discord-"));
  const fake = opts.reuseFake ?? (await startFakeDiscord(opts.fake));
  const ep = await startScriptedOpenAI([]);
  let deps: ConversationDeps | undefined;
  const store = opts.redis
    ? await createStore({ redisUrl: opts.redis.url, dataDir: "unused", prefix: opts.redis.prefix })
    : await createStore({ dataDir: join(dir, "data"), prefix: "neo:" });
  const channels = createChannelSettings(store);
  deps = await createConversationDeps({
    channels,
    endpointUrl: ep.url,
    gateDir: dir,
    ...(opts.env ? { env: opts.env } : {}),
    usage: { store, userDailyUsd: opts.budgetUsd },
    files: createFileIntake({ store, limits: { ...DEFAULT_FILE_LIMITS, ...opts.files } }),
    ...(opts.memory ? { memoryStore: store } : {}),
    ...(opts.servers ? { servers: opts.servers } : {}),
    ...(opts.oauth ? { oauth: opts.oauth } : {}),
  });
  const isAdmin = createAdminCheck(opts.adminIds?.(fake) ?? []);
  const access = createAccessPolicy({ store, isAdmin });
  const caps = createSpendCaps({ store });
  const broker = createApprovalBroker({
    instanceId: "test-instance",
    store,
    audit: createAuditLog(store),
    ttlMs: opts.approvalTtlMs ?? 60_000,
    pollMs: 20,
    caps,
  });
  let adapter: DiscordAdapter | undefined;
  const conversations = createConversations({
    store: opts.conversationStore ? opts.conversationStore(store) : store,
    newAgent: deps.newAgent,
    io: (key) => adapter!.io(key),
    instanceId: `discord-test-${fake.appId}`,
    limits: LIMITS,
  });
  const forgotten: string[] = [];
  const commands = testCommandDeps(
    store,
    conversations,
    broker,
    access,
    forgotten,
    usageCommands(deps.usage!),
    deps.memory,
  );
  commands.channels = channelCommands(channels);
  const { oauth } = opts;
  commands.connections = oauth && connectionCommands(oauth);
  // `/neo forget` is the real erasure (as `command-deps.ts`): transcripts, approvals, usage, the
  // person's tool folders and OAuth sign-ins (the surface's `eraseUser`), then their memory.
  const tools = deps.tools;
  const forgetMemory = commands.memory.forget;
  commands.memory.forget = (user, by) =>
    eraseUser(
      { store, forgetMemory: (u) => forgetMemory(u, by), approvals: broker, tools, conversations },
      user,
      by,
    );
  const makeAdapter = () =>
    createDiscordAdapter({
      config: {
        DISCORD_TOKEN: fake.token,
        DISCORD_API_URL: fake.apiBase,
        ...(opts.answerBots ? { NEO_ANSWER_BOTS: opts.answerBots(fake) } : {}),
      },
      conversations,
      broker,
      access,
      commands,
      store,
      editIntervalMs: 0,
      draftIntervalMs: opts.draftIntervalMs ?? 0,
    });
  adapter = makeAdapter();
  await conversations.start();
  try {
    await adapter.start();
  } catch (err) {
    // A refused start (e.g. a disallowed intent) leaves nothing running behind the test.
    await adapter.stop();
    await conversations.shutdown(1000);
    await deps.close();
    await store.close();
    await fake.close();
    await ep.close();
    throw err;
  }
  const rig: Rig = {
    fake,
    ep,
    store,
    conversations,
    broker,
    access,
    caps,
    adapter,
    dir,
    forgotten,
    ...(deps.memory ? { memory: deps.memory } : {}),
    async restartAdapter() {
      await adapter?.stop();
      adapter = makeAdapter();
      rig.adapter = adapter;
      await adapter.start();
    },
    openGate: (name) => writeFileSync(join(dir, `${name}.open`), ""),
    async close() {
      await adapter?.stop();
      await conversations.shutdown(1000);
      await deps?.close();
      if (opts.redis) for (const k of await store.keys("")) await store.delete(k);
      await store.close();
      if (!opts.reuseFake) await fake.close();
      await ep.close();
    },
  };
  return rig;
}

/** The `/neo` command deps over the real services; memory, tools and caps are inert here. */
export function testCommandDeps(
  store: Store,
  conversations: CommandDeps["conversations"],
  broker: ApprovalBroker,
  access: CommandDeps["access"],
  forgotten: string[] = [],
  usage: CommandDeps["usage"] = NO_USAGE,
  memory?: Memory,
): CommandDeps {
  return {
    conversations,
    memory: {
      list: async (user) => (memory ? memory.list(user) : []),
      forgetOne: async (user, id) => (memory ? memory.forgetOne(user, id) : false),
      setEverywhere: async (user, id, everywhere) =>
        memory ? memory.setEverywhere(user, id, everywhere) : false,
      export: async (user) => (memory ? memory.export(user) : {}),
      forget: async (user) => {
        forgotten.push(user);
        return memory ? memory.forget(user) : 0;
      },
    },
    tools: {
      list: () => ({ natural: ["gate__wait_for_gate"], escalate: [] }),
      servers: () => [],
      reload: async () => [],
    },
    approvals: {
      pending: () => broker.listPending(),
      cancel: (id, by) => broker.cancel(id, by),
      revokeUser: (user, by, note) => broker.revokeUser(user, by, note),
      cancelConversation: (conv, by, note) => broker.cancelConversation(conv, by, note),
    },
    access,
    caps: { setLimit: async () => {} },
    usage,
    channels: NO_CHANNELS,
    system: {
      models: () => ({ main: "gpt-test", cheap: "gpt-test" }),
      store: async () => ({
        kind: store.kind,
        healthy: store.healthy(),
        size: await store.size(),
        retention: { conversationDays: 30, auditDays: 365 },
      }),
    },
  };
}

/** Poll a condition (bounded) — for state that has no event to wait on. */
export async function until(
  label: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The bot's own messages in a channel as they stand now, oldest first (not interaction replies). */
export function botMessages(fake: FakeDiscord, channelId: string): MessagePayload[] {
  return fake.channelMessages(channelId).filter((m) => m.author.id === fake.bot.id && !m.webhook_id);
}

/**
 * Wait until the bot's messages in `channelId` read exactly `texts` and none carries a button (an
 * answer being written carries Stop): the answer is finished, whether streamed or said whole.
 */
export async function untilShown(fake: FakeDiscord, channelId: string, texts: string[]): Promise<void> {
  const now = () => botMessages(fake, channelId);
  await until(`the answer reads ${JSON.stringify(texts).slice(0, 80)}`, () => {
    const list = now();
    return (
      list.length === texts.length &&
      list.every(
        (m, i) => m.content === texts[i] && ((m.components as unknown[] | undefined) ?? []).length === 0,
      )
    );
  }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; shown: ${JSON.stringify(now().map((m) => m.content))}`);
  });
}
