/**
 * Server mode: the conversations layer over the shared services, the Slack and/or Discord adapters
 * the config names, `/healthz` on `NEO_HTTP_PORT` (on Slack's HTTP receiver when that runs, else on
 * a small server of its own), and `/metrics` on its own server (`NEO_METRICS_HOST:NEO_METRICS_PORT`,
 * loopback by default, behind `NEO_METRICS_TOKEN` when set), never on the public port. Both ports
 * and the instance id are this process's own (`process-place.ts`), so processes on one host never
 * collide.
 */
import type { Server } from "node:http";
import { createAgent } from "../core/agent/agent.js";
import type { CommandDeps } from "../core/commands/types.js";
import { createConversations } from "../core/conversations/create-conversations.js";
import { conversationLimits } from "../core/conversations/limits.js";
import type { ConversationIO, ConversationsService, PlatformAdapter } from "../core/conversations/types.js";
import { type ConversationKey, type Platform, parseConversationKey } from "../core/keys.js";
import { log, redact } from "../core/log.js";
import { oauthCallbackRoute } from "../core/tools/oauth/callback-route.js";
import { type HealthCheck, healthRoute, metricsRoute } from "../ops/health.js";
import { startOpsServer } from "../ops/http-server.js";
import { StoreUnavailableError } from "../store/types.js";
import { commandDeps } from "./command-deps.js";
import { healthChecks } from "./health-checks.js";
import type { Services } from "./services.js";

export interface NeoServer {
  conversations: ConversationsService;
  adapters: PlatformAdapter[];
  checks: HealthCheck[];
  /** The port `/healthz` is served on. */
  httpPort(): number | undefined;
  /** The port `/metrics` is served on. */
  metricsPort(): number | undefined;
  /** Stop taking work, let turns reach a cancellation point, stop the adapters. */
  stop(): Promise<void>;
}

export class NoPlatformError extends Error {
  readonly code = "NO_PLATFORM";
}

/**
 * Unfinished work lives in the store, so nothing is taken before it answers: with Redis down at
 * start-up, wait for it (saying so) instead of exiting or answering without the journal.
 */
async function startWhenStoreAnswers(start: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      const waitMs = Math.min(10_000, 250 * 2 ** attempt);
      log.warn({ err: err.message, attempt, waitMs }, "store unavailable at start-up; waiting for it");
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

export async function startServer(s: Services): Promise<NeoServer> {
  const { cfg } = s;
  const byPlatform = new Map<Platform, PlatformAdapter>();
  const io = (key: ConversationKey): ConversationIO => {
    const platform = parseConversationKey(key).platform;
    const adapter = byPlatform.get(platform);
    if (!adapter) throw new NoPlatformError(`no ${platform} adapter runs here for conversation ${key}`);
    return adapter.io(key);
  };
  const conversations = createConversations({
    store: s.store,
    newAgent: (state) => createAgent(s.agentDeps, state),
    warm: (user) => s.memory.warm(user),
    io,
    limits: conversationLimits(cfg),
    instanceId: s.place.instanceId,
    turns: s.turns,
  });
  const commands: CommandDeps = commandDeps(s, conversations);
  const checks: HealthCheck[] = [];
  const health = healthRoute(checks, redact);
  // Sign-ins to OAuth MCP servers come back here (`NEO_PUBLIC_URL` + `/mcp/oauth/callback`).
  const mcpRoutes = s.oauth ? [oauthCallbackRoute(s.oauth)] : [];

  // A platform's adapter, and its SDK with it, is loaded only when that platform is configured: a
  // deployment for one platform does not carry the other's code (discord.js and Neo's Discord
  // adapter: ~23 MB of heap; Bolt: ~6 MB).
  const slack =
    cfg.SLACK_BOT_TOKEN || cfg.SLACK_CLIENT_ID
      ? (await import("../adapters/slack/index.js")).createSlackAdapter({
          config: {
            ...(cfg.SLACK_BOT_TOKEN ? { SLACK_BOT_TOKEN: cfg.SLACK_BOT_TOKEN } : {}),
            ...(cfg.SLACK_CLIENT_ID
              ? {
                  SLACK_CLIENT_ID: cfg.SLACK_CLIENT_ID,
                  SLACK_CLIENT_SECRET: cfg.SLACK_CLIENT_SECRET,
                  SLACK_STATE_SECRET: cfg.SLACK_STATE_SECRET,
                }
              : {}),
            ...(cfg.SLACK_SIGNING_SECRET ? { SLACK_SIGNING_SECRET: cfg.SLACK_SIGNING_SECRET } : {}),
            ...(cfg.SLACK_APP_TOKEN ? { SLACK_APP_TOKEN: cfg.SLACK_APP_TOKEN } : {}),
            ...(cfg.SLACK_API_URL ? { SLACK_API_URL: cfg.SLACK_API_URL } : {}),
            NEO_HTTP_PORT: s.place.httpPort,
            NEO_ANSWER_BOTS: cfg.NEO_ANSWER_BOTS,
            assistant: {
              greeting: cfg.NEO_SLACK_ASSISTANT_GREETING,
              prompts: cfg.NEO_SLACK_ASSISTANT_PROMPTS,
            },
          },
          conversations,
          broker: s.broker,
          access: s.access,
          commands,
          store: s.store,
          customRoutes: [health, ...mcpRoutes],
        })
      : undefined;
  const discord = cfg.DISCORD_TOKEN
    ? (await import("../adapters/discord/index.js")).createDiscordAdapter({
        config: {
          DISCORD_TOKEN: cfg.DISCORD_TOKEN,
          ...(cfg.DISCORD_API_URL ? { DISCORD_API_URL: cfg.DISCORD_API_URL } : {}),
          NEO_ANSWER_BOTS: cfg.NEO_ANSWER_BOTS,
        },
        conversations,
        broker: s.broker,
        access: s.access,
        commands,
        store: s.store,
      })
    : undefined;
  const adapters = [slack, discord].filter((a): a is NonNullable<typeof a> => a !== undefined);
  if (adapters.length === 0)
    throw new NoPlatformError("none of SLACK_BOT_TOKEN, SLACK_CLIENT_ID and DISCORD_TOKEN is set");
  for (const a of adapters) byPlatform.set(a.platform, a);
  checks.push(...healthChecks(cfg, s.store, s.tools, adapters));

  // Recover unfinished work first (adapters' REST clients already work), then take new messages.
  // Approvals this instance left open when it died are closed as interrupted (never left looking
  // approved or clickable with no one to run them), then conversations resume.
  await startWhenStoreAnswers(async () => {
    await s.broker.recoverInterrupted((key) =>
      byPlatform.has(parseConversationKey(key).platform) ? io(key).approvals : undefined,
    );
    await conversations.start();
  });
  const started: PlatformAdapter[] = [];
  let ops: Server | undefined;
  let metricsServer: Server | undefined;
  try {
    for (const a of adapters) {
      await a.start();
      started.push(a);
    }
    // Slack's HTTP receiver serves /healthz on its own port; otherwise it gets a server.
    if (!(slack && slack.mode === "http"))
      ops = await startOpsServer(s.place.httpPort, [health, ...mcpRoutes]);
    metricsServer = await startOpsServer(
      s.place.metricsPort,
      [metricsRoute(cfg.NEO_METRICS_TOKEN)],
      cfg.NEO_METRICS_HOST,
    );
  } catch (err) {
    await conversations.shutdown(0);
    for (const a of started) await a.stop().catch(() => {});
    if (ops) await closeServer(ops);
    throw err;
  }
  const httpPort = (): number | undefined => (ops ? portOf(ops) : slack?.port());
  const metricsPort = (): number | undefined => (metricsServer ? portOf(metricsServer) : undefined);
  log.info(
    {
      platforms: adapters.map((a) => a.platform),
      instanceId: s.place.instanceId,
      port: httpPort(),
      metricsPort: metricsPort(),
    },
    "neo started",
  );

  return {
    conversations,
    adapters,
    checks,
    httpPort,
    metricsPort,
    async stop() {
      // Turns still post their last status while they wind down, so adapters stop after.
      await conversations.shutdown(cfg.NEO_SHUTDOWN_GRACE_MS);
      for (const a of adapters) {
        await a
          .stop()
          .catch((err: unknown) => log.warn({ err, platform: a.platform }, "adapter stop failed"));
      }
      if (ops) await closeServer(ops);
      if (metricsServer) await closeServer(metricsServer);
    },
  };
}

function portOf(server: Server): number | undefined {
  const addr = server.address();
  return typeof addr === "object" && addr ? addr.port : undefined;
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => server.close(() => resolve()));
}
