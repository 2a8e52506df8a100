/**
 * The Slack deployment shape for observability tests, every part real: the fake Slack Web API and
 * the Bolt app (Neo's Slack adapter) over signed HTTP, the conversations layer, the agent loop and
 * openai SDK against the scripted endpoint, the MCP tool surface over the fixture wallet and crasher
 * servers, core_execute with the embedded executor, the approval broker, caps and access.
 */
import { join } from "node:path";
import { createSlackAdapter, type SlackAdapter } from "../../../src/adapters/slack/adapter.js";
import { createAdminCheck } from "../../../src/core/access/admin.js";
import { createAccessPolicy } from "../../../src/core/access/policy.js";
import { createAgent } from "../../../src/core/agent/agent.js";
import { createAuditLog } from "../../../src/core/approvals/audit.js";
import { type ApprovalBroker, createApprovalBroker } from "../../../src/core/approvals/broker.js";
import { createSpendCaps } from "../../../src/core/approvals/caps.js";
import { type CoreExecute, createCoreExecute } from "../../../src/core/approvals/core-execute.js";
import { createEmbeddedExecutor } from "../../../src/core/approvals/embedded-executor.js";
import { createConversations } from "../../../src/core/conversations/create-conversations.js";
import type { ConversationsService } from "../../../src/core/conversations/types.js";
import { parseManifest } from "../../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../../src/core/tools/surface.js";
import { createStore } from "../../../src/memory/store/create-store.js";
import type { Store } from "../../../src/memory/store/types.js";
import { testCommandDeps } from "../../discord/support/harness.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/slack/fake-slack.js";
import { createSlackSender, type SlackSender } from "../../fakes/slack/signed-request.js";
import { DEFAULT_USERS, FAST_RATES, SIGNING_SECRET, TEAM } from "../../slack/support/harness.js";
import { recordingMemory, testLimits } from "../../support/agent-kit.js";
import { createLlmForTest } from "../../support/llm-for-test.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../../support/scripted-openai.js";
import { fixture, tempDir } from "../../tools/helpers.js";

export interface SlackStack {
  fake: FakeSlack;
  slack: SlackSender;
  ep: ScriptedOpenAI;
  store: Store;
  surface: McpToolSurface;
  broker: ApprovalBroker;
  conversations: ConversationsService;
  adapter: SlackAdapter;
  close(): Promise<void>;
}

export async function startSlackStack(): Promise<SlackStack> {
  const dir = tempDir("ops-slack");
  const fake = await startFakeSlack({ teamId: TEAM, users: DEFAULT_USERS });
  const ep = await startScriptedOpenAI();
  const { llm } = createLlmForTest(ep);
  const store = await createStore({ dataDir: join(dir, "data"), prefix: "neo:" });
  const access = createAccessPolicy({ store, isAdmin: createAdminCheck([]) });
  const broker = createApprovalBroker({ store, audit: createAuditLog(store), ttlMs: 60_000, pollMs: 20 });
  let coreExecute: CoreExecute | undefined;
  const surface = await createToolSurface({
    manifest: parseManifest({
      servers: {
        wallet: fixture("wallet", { WALLET_LOG: join(dir, "wallet.log") }),
        crasher: fixture("crasher"),
      },
    }),
    resultMaxChars: 20_000,
    callTimeoutMs: 20_000,
    coreExecute: (intent, ctx) => coreExecute!(intent, ctx),
  });
  const executor = createEmbeddedExecutor({ llm, tools: surface, store });
  coreExecute = createCoreExecute({ executor, broker, caps: createSpendCaps({ store }), access });
  // One dispatch per call (no transport retries), so each call is counted exactly once.
  const agentDeps = {
    llm,
    tools: surface,
    memory: recordingMemory(),
    limits: testLimits({ maxRetriesPerTool: 0 }),
  };
  let adapter: SlackAdapter | undefined;
  const conversations = createConversations({
    store,
    newAgent: (state) => createAgent(agentDeps, state),
    io: (key) => adapter!.io(key),
    instanceId: "ops-slack",
    limits: {
      maxConcurrentTurns: 4,
      recallTurns: 16,
      idleEvictMs: 60_000,
      leaseMs: 5000,
      dedupeTtlMs: 60_000,
      sweepMs: 60_000,
    },
  });
  adapter = createSlackAdapter({
    config: {
      SLACK_BOT_TOKEN: "xoxb-ops-test-token",
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: fake.apiUrl,
      NEO_HTTP_PORT: 0,
    },
    host: "127.0.0.1",
    conversations,
    broker,
    access,
    commands: testCommandDeps(store, conversations, broker, access),
    store,
    rateRules: FAST_RATES,
  });
  await conversations.start();
  await adapter.start();
  const slack = createSlackSender(`http://127.0.0.1:${adapter.port()}/slack/events`, SIGNING_SECRET);
  return {
    fake,
    slack,
    ep,
    store,
    surface,
    broker,
    conversations,
    adapter,
    close: async () => {
      await adapter?.stop();
      await conversations.shutdown(1000);
      await surface.close();
      await store.close();
      await fake.close();
      await ep.close();
    },
  };
}
