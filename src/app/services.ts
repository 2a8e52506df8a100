/**
 * The platform-independent services of one Neo process, built from the validated config: store,
 * two-model client, cortex, MCP tool surface, access, spend caps, approvals and the executor behind
 * `core_execute`. Console and server mode both start from here, so there is one wiring.
 */

import { type Config, writebackConcurrencyOf } from "../config.js";
import { createAdminCheck, type IsAdmin } from "../core/access/admin.js";
import { type AccessPolicy, createAccessPolicy } from "../core/access/policy.js";
import type { AgentDeps } from "../core/agent/deps.js";
import { limitsFromConfig } from "../core/agent/limits.js";
import { signInPort } from "../core/agent/sign-in.js";
import { createAuditLog } from "../core/approvals/audit.js";
import { type ApprovalBroker, createApprovalBroker } from "../core/approvals/broker.js";
import { createSpendCaps, type SpendCaps } from "../core/approvals/caps.js";
import { type CoreExecute, createCoreExecute } from "../core/approvals/core-execute.js";
import { createEmbeddedExecutor } from "../core/approvals/embedded-executor.js";
import type { Executor } from "../core/approvals/executor.js";
import { createRemoteExecutor } from "../core/approvals/remote-executor.js";
import { type ChannelSettingsStore, createChannelSettings } from "../core/channels/index.js";
import { daysToMs } from "../core/conversations/limits.js";
import { createConversationLookup } from "../core/conversations/lookup.js";
import { createFileIntake, fileLimitsFromConfig } from "../core/files/index.js";
import { createTurnGauge, type TurnGauge } from "../core/foreground.js";
import { createLlmClient } from "../core/llm/client.js";
import type { LlmClient } from "../core/llm/types.js";
import { createUsageLedger, pricesFromConfig, type UsageLedger } from "../core/llm/usage-ledger.js";
import { log } from "../core/log.js";
import { loadManifest } from "../core/tools/manifest.js";
import { oauthConnectionsFor } from "../core/tools/oauth/from-manifest.js";
import type { OAuthConnections } from "../core/tools/oauth/sign-in-types.js";
import { createToolSurface, type McpToolSurface } from "../core/tools/surface.js";
import { createUsageTracker, type UsageTracker } from "../core/usage/tracker.js";
import { createMemory, type Memory } from "../memory/memory.js";
import { reportStoreHealth } from "../ops/metrics.js";
import { createStore } from "../store/create-store.js";
import type { Store } from "../store/types.js";
import type { ProcessPlace } from "./process-place.js";

export interface Services {
  cfg: Config;
  /** This process's instance id and ports among the fleet's processes on its host. */
  place: ProcessPlace;
  store: Store;
  ledger: UsageLedger;
  /** Per-channel settings (`/neo channel`), read by the loop at each turn and by the adapters' gate. */
  channels: ChannelSettingsStore;
  /** Durable usage counts, the USD budgets, `/neo usage` and the status lines. */
  usage: UsageTracker;
  llm: LlmClient;
  memory: Memory;
  /** The turns running; the conversation layer counts them, write-back gives way to them. */
  turns: TurnGauge;
  tools: McpToolSurface;
  /** Sign-ins to the manifest's `"auth": "oauth"` servers; undefined when it has none. */
  oauth: OAuthConnections | undefined;
  isAdmin: IsAdmin;
  access: AccessPolicy;
  caps: SpendCaps;
  broker: ApprovalBroker;
  executor: Executor;
  /** What every agent of this process is built from. */
  agentDeps: AgentDeps;
  /** Wait for background work (write-back), then close the tool servers and the store. */
  close(): Promise<void>;
}

export async function createServices(cfg: Config, place: ProcessPlace): Promise<Services> {
  const store = await createStore({
    redisUrl: cfg.REDIS_URL,
    redisCluster: cfg.REDIS_CLUSTER,
    dataDir: cfg.NEO_DATA_DIR,
    prefix: cfg.NEO_KEY_PREFIX,
    log: log.child({ component: "store", kind: "redis" }),
  });
  reportStoreHealth(() => store.healthy());
  const ledger = createUsageLedger(pricesFromConfig(cfg));
  const usage = createUsageTracker({
    store,
    ledger,
    userDailyUsd: cfg.NEO_BUDGET_USD_DAILY,
    deploymentDailyUsd: cfg.NEO_BUDGET_USD_DAILY_DEPLOYMENT,
  });
  const llm = createLlmClient(cfg, ledger);
  const channels = createChannelSettings(store);
  const turns = createTurnGauge();
  const memory = createMemory({
    store,
    llm,
    recallTurns: cfg.NEO_RECALL_TURNS,
    ...(cfg.NEO_MEMORY_RETENTION_DAYS === undefined
      ? {}
      : { retentionMs: daysToMs(cfg.NEO_MEMORY_RETENTION_DAYS) }),
    writebackConcurrency: writebackConcurrencyOf(cfg),
    foreground: turns,
  });
  const isAdmin = createAdminCheck(cfg.NEO_ADMIN_USER_IDS);
  const access = createAccessPolicy({ store, isAdmin });
  const caps = createSpendCaps({ store, rates: cfg.NEO_ASSET_RATES });
  const broker = createApprovalBroker({
    store,
    audit: createAuditLog(store, { retentionMs: daysToMs(cfg.NEO_AUDIT_RETENTION_DAYS) }),
    retentionMs: daysToMs(cfg.NEO_AUDIT_RETENTION_DAYS),
    ttlMs: cfg.NEO_APPROVAL_TTL_SECONDS * 1000,
    pollMs: cfg.NEO_APPROVAL_POLL_MS,
    maxPendingPerUser: cfg.NEO_MAX_PENDING_APPROVALS,
    instanceId: place.instanceId,
    isAdmin: (u) => isAdmin(u),
    caps,
  });

  // The embedded executor plans over the surface's Escalate tools, and the surface advertises
  // `core_execute`, so the delegate is bound once both exist.
  let coreExecute: CoreExecute | undefined;
  const manifest = await loadManifest(cfg.NEO_MCP_MANIFEST);
  const oauth = oauthConnectionsFor(manifest, process.env, store, cfg);
  const tools = await createToolSurface({
    manifest,
    ...(oauth ? { oauth } : {}),
    ...(cfg.NEO_ESCALATE_PATTERNS ? { escalatePatterns: cfg.NEO_ESCALATE_PATTERNS } : {}),
    resultMaxChars: cfg.NEO_TOOL_RESULT_MAX_CHARS,
    callTimeoutMs: cfg.NEO_TOOL_TIMEOUT_MS,
    userIdleMs: cfg.NEO_TOOL_USER_IDLE_MS,
    userMaxProcesses: cfg.NEO_TOOL_USER_MAX_PROCESSES,
    coreExecute: (intent, ctx) => {
      if (!coreExecute) throw new Error("core_execute called before start-up finished");
      return coreExecute(intent, ctx);
    },
    memoryRecall: (query, ctx) => memory.memoryRecall(query, ctx),
    conversationLookup: createConversationLookup(store),
  });
  const executor = cfg.NEO_EXECUTOR_URL
    ? createRemoteExecutor({
        url: cfg.NEO_EXECUTOR_URL,
        timeoutMs: cfg.NEO_EXECUTOR_TIMEOUT_MS,
        retries: cfg.NEO_EXECUTOR_RETRIES,
        pollMs: cfg.NEO_EXECUTOR_POLL_MS,
        planTimeoutMs: cfg.NEO_EXECUTOR_PLAN_TIMEOUT_MS,
        executeTimeoutMs: cfg.NEO_EXECUTOR_EXECUTE_TIMEOUT_MS,
        spendRules: cfg.NEO_SPEND_RULES,
      })
    : createEmbeddedExecutor({ llm, tools, store, spendRules: cfg.NEO_SPEND_RULES });
  coreExecute = createCoreExecute({ executor, broker, caps, access });
  const files = createFileIntake({ store, limits: fileLimitsFromConfig(cfg) });

  return {
    cfg,
    place,
    store,
    ledger,
    channels,
    usage,
    llm,
    memory,
    turns,
    tools,
    oauth,
    isAdmin,
    access,
    caps,
    broker,
    executor,
    agentDeps: {
      llm,
      tools,
      memory: memory.port,
      limits: limitsFromConfig(cfg),
      identity: { name: cfg.NEO_BOT_NAME, deployment: cfg.NEO_DEPLOYMENT },
      files,
      budget: usage.budget,
      channels,
      signIn: oauth && signInPort(oauth, tools),
    },
    async close() {
      await memory.drained();
      await usage.flushed();
      await files.close();
      await tools.close();
      await store.close();
    },
  };
}
