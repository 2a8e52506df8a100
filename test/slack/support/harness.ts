/**
 * The whole Slack stack for end-to-end tests: a fake Slack Web API, the real Bolt app in HTTP mode
 * on a local port (Neo's Slack adapter), the real conversations layer, agent loop and openai SDK
 * against a scripted endpoint, the real approval broker, access policy and a file store.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CustomRoute } from "@slack/bolt";
import { expect } from "vitest";
import { createSlackAdapter, type SlackAdapter } from "../../../src/adapters/slack/adapter.js";
import type { AssistantSettings } from "../../../src/adapters/slack/assistant.js";
import type { DraftPace } from "../../../src/adapters/slack/draft/pacer.js";
import { SLACK_BOT_SCOPES } from "../../../src/adapters/slack/installations.js";
import type { SlackRateRules } from "../../../src/adapters/slack/outbound/rules.js";
import { createAdminCheck } from "../../../src/core/access/admin.js";
import { type AccessPolicy, createAccessPolicy } from "../../../src/core/access/policy.js";
import { createAgent } from "../../../src/core/agent/agent.js";
import type { SignInPort } from "../../../src/core/agent/sign-in.js";
import type { AgentLimits } from "../../../src/core/agent/types.js";
import { createAuditLog } from "../../../src/core/approvals/audit.js";
import { type ApprovalBroker, createApprovalBroker } from "../../../src/core/approvals/broker.js";
import { createSpendCaps, type SpendCaps } from "../../../src/core/approvals/caps.js";
import { createCoreExecute } from "../../../src/core/approvals/core-execute.js";
import type { Executor } from "../../../src/core/approvals/executor.js";
import { createChannelSettings } from "../../../src/core/channels/index.js";
import type { CommandDeps } from "../../../src/core/commands/types.js";
import { createConversations } from "../../../src/core/conversations/create-conversations.js";
import type { ConversationsService } from "../../../src/core/conversations/types.js";
import { createFileIntake, DEFAULT_FILE_LIMITS, type FileLimits } from "../../../src/core/files/index.js";
import type { UserKey } from "../../../src/core/keys.js";
import { parseManifest } from "../../../src/core/tools/manifest.js";
import { createToolSurface } from "../../../src/core/tools/surface.js";
import { MEMORY_RECALL_TOOL, type ToolCallContext, type ToolSurface } from "../../../src/core/tools/types.js";
import { eraseUser } from "../../../src/core/user-data.js";
import { createMemory, type Memory } from "../../../src/memory/memory.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/types.js";
import {
  type FakeInstall,
  type FakeMessage,
  type FakeSlack,
  type FakeSlackOptions,
  type FakeTier,
  startFakeSlack,
} from "../../fakes/slack/fake-slack.js";
import { createSlackSender, type SlackSender } from "../../fakes/slack/signed-request.js";
import { type TestTools, type ToolHandler, testDeps, testTools } from "../../support/agent-kit.js";
import { createLlmForTest } from "../../support/llm-for-test.js";
import {
  type ScriptedOpenAI,
  type ScriptedTurn,
  startScriptedOpenAI,
} from "../../support/scripted-openai.js";
import { channelCommands, usageCommands } from "../../support/usage-commands.js";

export const SIGNING_SECRET = "test-signing-secret-0123456789";
export const TEAM = "T0001";

export interface HarnessOptions {
  turns?: ScriptedTurn[];
  tools?: Record<string, ToolHandler>;
  /** An Executor for `core_execute` (wired through the real createCoreExecute, broker, caps, access). */
  executor?: Executor;
  users?: FakeSlackOptions["users"];
  /** Channels `conversations.info` knows (default: DEFAULT_CHANNELS). */
  channels?: FakeSlackOptions["channels"];
  adminIds?: string[];
  /** Rate rules for both sides: the fake enforces them, the adapter must stay within them. */
  rates?: Partial<SlackRateRules>;
  approvalTtlMs?: number;
  maxConcurrentTurns?: number;
  /** Extra routes on the receiver's port (ops routes). */
  customRoutes?: CustomRoute[];
  /** Socket Mode instead of HTTP (events then arrive through `fake.socketSend`). */
  socketMode?: boolean;
  /** Config overrides for the model client (e.g. `NEO_MODEL_PRICES`). */
  env?: Record<string, string>;
  /** `NEO_BUDGET_USD_DAILY`: each user's daily USD budget (counted in the store). */
  budgetUsd?: number;
  /** The file store's directory; a second harness on the same one is a restart. */
  dataDir?: string;
  /**
   * Builds the tool surface from the harness's parts (e.g. real MCP servers and the embedded
   * executor) instead of `tools` and `executor`; it is closed with the harness. Its `eraseUser`
   * (the MCP surface's: per-user tool folders, OAuth sign-ins) is part of `/neo forget`.
   */
  surface?: (
    parts: SurfaceParts,
  ) => Promise<ToolSurface & { close(): Promise<void>; eraseUser?(user: UserKey): Promise<void> }>;
  /** Loop limits over the test defaults. */
  limits?: Partial<AgentLimits>;
  /** Per-person OAuth sign-ins checked at each turn's start (`AgentDeps.signIn`). */
  signIn?: SignInPort;
  /** `/neo connections`' sign-ins (`CommandDeps.connections`). */
  connections?: CommandDeps["connections"];
  /**
   * OAuth mode: no `SLACK_BOT_TOKEN`; the adapter serves `/slack/install` and the fake's
   * `oauth.v2.access` installs these workspaces (their events are sent with `envelope(…, team)`).
   */
  oauthInstalls?: FakeInstall[];
  /** `NEO_ANSWER_BOTS`: bot ids answered like people. */
  answerBots?: string[];
  /** File intake limits over the defaults (e.g. `vision: true`). */
  files?: Partial<FileLimits>;
  /**
   * Real memory over the harness's store: the loop faults and writes back through it, the tool
   * surface advertises `memory_recall` (with `tools` still served), `/neo memory` lists it.
   */
  memory?: boolean;
  /**
   * When answer drafts write. Default: the first write is held back 10 s, so the scripted answers of
   * tests about other things are said whole, as before streaming; streaming tests set their pace.
   */
  draftPace?: Partial<DraftPace>;
  /**
   * How long a turn's status waits before it is shown. Default 0: at once, so tests about statuses
   * see them without waiting; tests of when progress shows set the production value.
   */
  statusDelayMs?: number;
  /** Each user's turn rate (default: unlimited, 1,000,000 a minute). */
  userTurns?: { perMinute: number; burst: number };
  /** The assistant panel's greeting and prompts (default TEST_ASSISTANT). */
  assistant?: AssistantSettings;
  /**
   * A Redis store under this key prefix instead of a file store (keys deleted on close, unless
   * `keep`: a later harness on the same prefix is then a restart, or a second instance).
   */
  redis?: { url: string; prefix: string; keep?: boolean };
  /** Another harness's fake Slack (a restart of Neo against the same workspace); left open on close. */
  reuseFake?: FakeSlack;
  /** What the conversations layer writes through (e.g. `crash-store.ts`: a process that dies at a write). */
  conversationStore?: (store: Store) => Store;
}

export const TEST_ASSISTANT: AssistantSettings = {
  greeting: "Hello from Neo.",
  prompts: [
    { title: "Summarise", message: "Summarise the channel I'm looking at." },
    { title: "Help", message: "What can you do?" },
  ],
};

/** The app's OAuth credentials in OAuth-mode harnesses. */
export const OAUTH = {
  clientId: "111.222",
  clientSecret: "client-secret-0123456789",
  stateSecret: "state-secret-abcdef0123456789",
};

export interface SurfaceParts {
  ep: ScriptedOpenAI;
  store: Store;
  broker: ApprovalBroker;
  access: AccessPolicy;
  /** The spend caps the broker reserves on Approve. */
  caps: SpendCaps;
}

export interface Harness {
  fake: FakeSlack;
  slack: SlackSender;
  ep: ScriptedOpenAI;
  adapter: SlackAdapter;
  conversations: ConversationsService;
  broker: ApprovalBroker;
  store: Store;
  tools: TestTools;
  access: AccessPolicy;
  /** With `memory: true`. */
  memory?: Memory;
  close(): Promise<void>;
}

/** Default test rates: Slack's shapes, windows shortened so a burst finishes in seconds. */
export const FAST_RATES: SlackRateRules = {
  postPerChannel: { limit: 1, windowMs: 40 },
  update: { limit: 5, windowMs: 400 },
  delete: { limit: 5, windowMs: 400 },
  ephemeral: { limit: 10, windowMs: 400 },
  usersInfo: { limit: 10, windowMs: 400 },
  conversationsInfo: { limit: 10, windowMs: 400 },
  replies: { limit: 5, windowMs: 400 },
  history: { limit: 5, windowMs: 400 },
  reactions: { limit: 5, windowMs: 400 },
  upload: { limit: 5, windowMs: 400 },
  stream: { limit: 5, windowMs: 400 },
  appendStream: { limit: 10, windowMs: 400 },
  assistant: { limit: 10, windowMs: 400 },
};

function tiersOf(r: SlackRateRules): Record<string, FakeTier> {
  const ws = (x: { limit: number; windowMs: number }): FakeTier => ({ ...x, scope: "workspace" });
  return {
    "chat.postMessage": { ...r.postPerChannel, scope: "channel" },
    "chat.update": ws(r.update),
    "chat.delete": ws(r.delete),
    "chat.postEphemeral": ws(r.ephemeral),
    "users.info": ws(r.usersInfo),
    "conversations.info": ws(r.conversationsInfo),
    "conversations.replies": ws(r.replies),
    "conversations.history": ws(r.history),
    "reactions.add": ws(r.reactions),
    "chat.startStream": ws(r.stream),
    "chat.stopStream": ws(r.stream),
    "chat.appendStream": ws(r.appendStream),
    "assistant.threads.setStatus": ws(r.assistant),
    "assistant.threads.setSuggestedPrompts": ws(r.assistant),
    "assistant.threads.setTitle": ws(r.assistant),
  };
}

export const DEFAULT_USERS: NonNullable<FakeSlackOptions["users"]> = [
  { id: "UANN", name: "ann", display_name: "Ann" },
  { id: "UBOB", name: "bob", display_name: "Bob" },
  { id: "UADMIN", name: "root", display_name: "Root", is_admin: true },
];

export const DEFAULT_CHANNELS: NonNullable<FakeSlackOptions["channels"]> = [
  { id: "C1", name: "general" },
  { id: "CRANDOM", name: "random" },
];

export async function startHarness(o: HarnessOptions = {}): Promise<Harness> {
  const rates = { ...FAST_RATES, ...o.rates };
  const fake =
    o.reuseFake ??
    (await startFakeSlack({
      teamId: TEAM,
      users: o.users ?? DEFAULT_USERS,
      channels: o.channels ?? DEFAULT_CHANNELS,
      tiers: tiersOf(rates),
      ...(o.oauthInstalls
        ? { oauth: { clientId: OAUTH.clientId, clientSecret: OAUTH.clientSecret, installs: o.oauthInstalls } }
        : {}),
    }));
  const ep = await startScriptedOpenAI(o.turns ?? []);
  const store = o.redis
    ? await createStore({ redisUrl: o.redis.url, dataDir: "unused", prefix: o.redis.prefix })
    : await createStore({ dataDir: o.dataDir ?? mkdtempSync(join(tmpdir(), "neo-slack-")), prefix: "neo:" });
  const tools = testTools(o.tools ?? {});
  const isAdmin = createAdminCheck(o.adminIds ?? []);
  const access = createAccessPolicy({ store, isAdmin });
  const caps = createSpendCaps({ store });
  const broker = createApprovalBroker({
    instanceId: "test-instance",
    store,
    audit: createAuditLog(store),
    ttlMs: o.approvalTtlMs ?? 60_000,
    pollMs: 50,
    isAdmin: (u) => isAdmin(u),
    caps,
  });
  const coreExecute = o.executor
    ? createCoreExecute({ executor: o.executor, broker, caps, access })
    : undefined;
  const memory = o.memory ? createMemory({ store, llm: createLlmForTest(ep).llm }) : undefined;
  const built = o.surface ? await o.surface({ ep, store, broker, access, caps }) : undefined;
  const custom = built ? built : memory ? await memorySurface(memory, tools) : undefined;
  const surface: ToolSurface = custom
    ? custom
    : coreExecute
      ? {
          schemas: () => [
            ...tools.schemas(),
            {
              type: "function",
              function: {
                name: "core_execute",
                description: "Plan and run a spending intent after the user approves it",
                parameters: {
                  type: "object",
                  properties: { intent: { type: "string" } },
                  required: ["intent"],
                },
              },
            },
          ],
          dispatch: (name, args, ctx) =>
            name === "core_execute" ? coreExecute(String(args.intent), ctx) : tools.dispatch(name, args, ctx),
        }
      : tools;
  const agentDeps = testDeps(ep, {
    tools: surface,
    ...(o.limits ? { limits: o.limits } : {}),
    ...(o.env ? { env: o.env } : {}),
    usage: { store, userDailyUsd: o.budgetUsd },
    ...(memory ? { memory: memory.port } : {}),
  });
  const files = createFileIntake({ store, limits: { ...DEFAULT_FILE_LIMITS, ...o.files } });
  const channels = createChannelSettings(store);
  agentDeps.channels = channels;
  agentDeps.signIn = o.signIn;
  let adapter: SlackAdapter | null = null;
  const conversations = createConversations({
    store: o.conversationStore ? o.conversationStore(store) : store,
    newAgent: (state) => createAgent({ ...agentDeps, files }, state),
    ...(memory ? { warm: (user: UserKey) => memory.warm(user) } : {}),
    io: (key) => adapter!.io(key),
    instanceId: "slack-test",
    limits: {
      maxConcurrentTurns: o.maxConcurrentTurns ?? 8,
      userTurns: o.userTurns ?? { perMinute: 1_000_000, burst: 1_000_000 },
      recallTurns: 16,
      idleEvictMs: 60_000,
      retentionMs: 30 * 86_400_000,
      leaseMs: 5000,
      dedupeTtlMs: 60_000,
      sweepMs: 60_000,
    },
  });
  const commands: CommandDeps = {
    conversations,
    memory: memory
      ? {
          list: (u) => memory.list(u),
          forgetOne: (u, id) => memory.forgetOne(u, id),
          setEverywhere: (u, id, everywhere) => memory.setEverywhere(u, id, everywhere),
          // The real erasure (as `command-deps.ts`), with a built surface's `eraseUser`.
          forget: (u, by) =>
            eraseUser(
              {
                store,
                forgetMemory: (x) => memory.forget(x),
                approvals: broker,
                tools: { eraseUser: async (x) => built?.eraseUser?.(x) },
                conversations,
              },
              u,
              by,
            ),
          export: (u) => memory.export(u),
        }
      : {
          list: async () => [],
          forgetOne: async () => false,
          setEverywhere: async () => false,
          forget: async () => 0,
          export: async () => ({}),
        },
    tools: {
      list: () => ({ natural: tools.schemas().map((s) => s.function.name), escalate: [] }),
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
    caps: {
      setLimit: async (user, amount, asset) => {
        await store.set(`test:cap:${user}`, { amount, asset });
      },
    },
    usage: usageCommands(agentDeps.usage!),
    channels: channelCommands(channels),
    connections: o.connections,
    system: {
      models: () => ({ main: "main-model", cheap: "main-model" }),
      store: async () => ({
        kind: store.kind,
        healthy: store.healthy(),
        size: await store.size(),
        retention: { conversationDays: 30, auditDays: 365 },
      }),
    },
  };
  adapter = createSlackAdapter({
    config: {
      ...(o.oauthInstalls
        ? {
            SLACK_CLIENT_ID: OAUTH.clientId,
            SLACK_CLIENT_SECRET: OAUTH.clientSecret,
            SLACK_STATE_SECRET: OAUTH.stateSecret,
          }
        : { SLACK_BOT_TOKEN: "xoxb-test-token" }),
      ...(o.socketMode ? { SLACK_APP_TOKEN: "xapp-test-token" } : { SLACK_SIGNING_SECRET: SIGNING_SECRET }),
      SLACK_API_URL: fake.apiUrl,
      NEO_HTTP_PORT: 0,
      ...(o.answerBots ? { NEO_ANSWER_BOTS: o.answerBots } : {}),
      assistant: o.assistant ?? TEST_ASSISTANT,
    },
    host: "127.0.0.1",
    conversations,
    broker,
    access,
    commands,
    store,
    rateRules: rates,
    draftPace: { firstWriteMs: 10_000, intervalMs: 0, ...o.draftPace },
    statusDelayMs: o.statusDelayMs ?? 0,
    ...(o.customRoutes ? { customRoutes: o.customRoutes } : {}),
  });
  await conversations.start();
  await adapter.start();
  const slack = createSlackSender(`http://127.0.0.1:${adapter.port()}/slack/events`, SIGNING_SECRET);
  return {
    fake,
    slack,
    ep,
    adapter,
    conversations,
    broker,
    store,
    tools,
    access,
    ...(memory ? { memory } : {}),
    close: async () => {
      await adapter?.stop();
      await conversations.shutdown(1000);
      await memory?.drained();
      await custom?.close();
      await files.close();
      if (o.redis && !o.redis.keep) for (const k of await store.keys("")) await store.delete(k);
      await store.close();
      if (!o.reuseFake) await fake.close();
      await ep.close();
    },
  };
}

/** The real tool surface with `memory_recall` wired to `memory`, and the plain test tools beside it. */
async function memorySurface(memory: Memory, tools: TestTools) {
  const real = await createToolSurface({
    manifest: parseManifest({ servers: {} }),
    resultMaxChars: 20_000,
    callTimeoutMs: 5_000,
    memoryRecall: memory.memoryRecall,
  });
  return {
    schemas: () => [...tools.schemas(), ...real.schemas()],
    dispatch: (name: string, args: Record<string, unknown>, ctx: ToolCallContext) =>
      name === MEMORY_RECALL_TOOL ? real.dispatch(name, args, ctx) : tools.dispatch(name, args, ctx),
    close: () => real.close(),
  };
}

let eventSeq = 0;

/** An Events API envelope for `event`. */
export function envelope(
  event: Record<string, unknown>,
  eventId = `Ev${++eventSeq}${Date.now()}`,
  team = TEAM,
): Record<string, unknown> {
  return {
    token: "legacy",
    team_id: team,
    api_app_id: "A1",
    type: "event_callback",
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    event,
  };
}

/**
 * A `/neo <text>` slash command as Slack posts it (the documented slash-command payload,
 * https://api.slack.com/interactivity/slash-commands#app_command_handling), its `response_url` on
 * the fake at `fakeBaseUrl`.
 */
export function slashCommand(fakeBaseUrl: string, user: string, text: string, channel = "C1") {
  return {
    command: "/neo",
    text,
    team_id: TEAM,
    team_domain: "fake",
    channel_id: channel,
    channel_name: "general",
    user_id: user,
    user_name: user.toLowerCase(),
    api_app_id: "A1",
    response_url: `${fakeBaseUrl}/response/cmd-${user}`,
    trigger_id: "1.2.3",
    token: "legacy",
  };
}

let tsSeq = 0;
/** A fresh message ts, distinct from the fake's own. */
export function userTs(): string {
  return `1690000000.${String(++tsSeq).padStart(6, "0")}`;
}

export function mention(channel: string, user: string, text: string, extra: Record<string, unknown> = {}) {
  const ts = (extra.ts as string | undefined) ?? userTs();
  return { type: "app_mention", channel, user, text: `<@UNEO> ${text}`, ts, event_ts: ts, ...extra };
}

/** The install flow a browser goes through: /slack/install, Slack's consent (skipped), the redirect. */
export async function installWorkspace(h: Harness, code: string): Promise<Response> {
  const base = `http://127.0.0.1:${h.adapter.port()}`;
  const start = await fetch(`${base}/slack/install`, { redirect: "manual" });
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get("location")!);
  expect(authorize.searchParams.get("client_id")).toBe(OAUTH.clientId);
  expect(authorize.searchParams.get("scope")!.split(",").sort()).toEqual([...SLACK_BOT_SCOPES].sort());
  const state = authorize.searchParams.get("state")!;
  const cookie = start.headers.get("set-cookie")!.split(";")[0]!;
  return fetch(`${base}/slack/oauth_redirect?code=${code}&state=${encodeURIComponent(state)}`, {
    headers: { cookie },
    redirect: "manual",
  });
}

/** Poll `cond` until it holds (bounded); for state that no recorded call signals. */
export async function until(what: string, cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A button click on an ephemeral message (no message body), as Slack delivers it; its response_url
 * is the fake's `/response/<responseId>`.
 */
export function ephemeralClick(
  h: Pick<Harness, "slack" | "fake">,
  o: {
    user: string;
    channel: string;
    actionId: string;
    value: string;
    responseId: string;
    blockId?: string;
    state?: Record<string, unknown>;
  },
) {
  return h.slack.action({
    type: "block_actions",
    team: { id: TEAM, domain: "fake" },
    user: { id: o.user, team_id: TEAM },
    api_app_id: "A1",
    token: "legacy",
    trigger_id: "1.2.3",
    container: { type: "message", message_ts: "1.1", channel_id: o.channel, is_ephemeral: true },
    channel: { id: o.channel, name: o.channel.toLowerCase() },
    ...(o.state ? { state: { values: o.state } } : {}),
    response_url: `${h.fake.baseUrl}/response/${o.responseId}`,
    actions: [
      {
        action_id: o.actionId,
        ...(o.blockId ? { block_id: o.blockId } : {}),
        value: o.value,
        type: "button",
        action_ts: "1.2",
      },
    ],
  });
}

/** A click on an approval message's Approve or Reject button by `user`, as Slack delivers it. */
export function click(
  h: Pick<Harness, "slack" | "fake">,
  msg: FakeMessage,
  user: string,
  actionId: "neo_approve" | "neo_reject",
  value: string,
) {
  return h.slack.action({
    type: "block_actions",
    team: { id: TEAM, domain: "fake" },
    user: { id: user, team_id: TEAM },
    api_app_id: "A1",
    token: "legacy",
    trigger_id: "1.2.3",
    container: { type: "message", message_ts: msg.ts, channel_id: msg.channel, is_ephemeral: false },
    channel: { id: msg.channel, name: "wallet" },
    message: { type: "message", ts: msg.ts, thread_ts: msg.thread_ts, text: msg.text, blocks: msg.blocks },
    response_url: `${h.fake.baseUrl}/response/${msg.ts}`,
    actions: [
      {
        action_id: actionId,
        block_id: "neo_approval",
        value,
        type: "button",
        action_ts: String(Date.now() / 1000),
      },
    ],
  });
}
