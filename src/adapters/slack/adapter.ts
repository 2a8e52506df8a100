/**
 * The Slack adapter: a Bolt app (HTTP Events API, or Socket Mode when `SLACK_APP_TOKEN` is set)
 * whose listeners feed the conversation layer, and whose `io(conversation)` renders the Reporter and
 * approvals into one thread. Web API calls go to `SLACK_API_URL` (default Slack's) with a short retry
 * policy; rate limits are handled once, in the gate (see `rate-gate.ts`).
 *
 * One workspace with `SLACK_BOT_TOKEN`, or many with the OAuth install (`SLACK_CLIENT_ID`, …):
 * Bolt serves `/slack/install` and `/slack/oauth_redirect`, installations live in the store, and
 * each workspace is answered with its own token (`workspaces.ts`). `app_uninstalled` and
 * `tokens_revoked` remove a workspace's installation and everything Neo kept about it.
 *
 * This file wires the pieces in `adapter/` together and owns the lifecycle (start, stop, connected).
 */
import type { PlatformAdapter } from "../../core/conversations/types.js";
import { log } from "../../core/log.js";
import { createBoltApp } from "./adapter/bolt-app.js";
import { createConversationIOs } from "./adapter/conversation-io.js";
import { handleAppErrors } from "./adapter/errors.js";
import { registerSlackListeners } from "./adapter/listeners.js";
import { type SlackAdapterOptions, slackModes } from "./adapter/options.js";
import { createSingleBot } from "./adapter/single-bot.js";
import { createAssistantThreads } from "./assistant-threads.js";
import { DEFAULT_DRAFT_PACE, type DraftPace } from "./draft/pacer.js";
import { createSlackInstallations } from "./installations.js";
import { SLACK_RATE_RULES } from "./outbound/rules.js";
import { createSlackWorkspaces } from "./workspaces.js";

export interface SlackAdapter extends PlatformAdapter {
  readonly platform: "slack";
  readonly mode: "http" | "socket";
  /** `token`: one workspace (`SLACK_BOT_TOKEN`); `oauth`: every workspace that installed Neo. */
  readonly auth: "token" | "oauth";
  /** HTTP mode: the port actually listened on (after `start()`). */
  port(): number | undefined;
  /** Calls queued or in flight towards Slack (for metrics and graceful shutdown). */
  pendingCalls(): number;
  /** Calls that waited for room in their rate window (or a Retry-After), by gate key. */
  rateWaits(): Record<string, number>;
}

/** How long `stop` waits for queued Web API calls (status removals behind `chat.delete`'s tier). */
const STOP_DRAIN_MS = 5000;

export function createSlackAdapter(o: SlackAdapterOptions): SlackAdapter {
  const { config } = o;
  const { socket, oauth } = slackModes(config);
  const installations = oauth ? createSlackInstallations(o.store) : undefined;
  let connected = false;
  let port: number | undefined;
  const { app, receiver } = createBoltApp({ config, socket, installations, customRoutes: o.customRoutes });
  if ("client" in receiver) {
    receiver.client.on("connected", () => {
      connected = true;
    });
    receiver.client.on("disconnected", () => {
      connected = false;
    });
  }
  handleAppErrors(app);

  // Single-token mode: the one bot, identified once by auth.test (also for turns resumed before start).
  const singleBot = createSingleBot(app, config.SLACK_BOT_TOKEN!);
  const workspaces = createSlackWorkspaces({
    client: app.client,
    rules: { ...SLACK_RATE_RULES, ...o.rateRules },
    store: o.store,
    bot: installations ? (teamId) => installations.bot(teamId) : () => singleBot(),
  });

  const pace: DraftPace = { ...DEFAULT_DRAFT_PACE, ...o.draftPace };
  /** Assistant-panel threads this process saw recently: their Status is the thread's. */
  const assistantThreads = createAssistantThreads();
  const ios = createConversationIOs({
    workspaces,
    assistantThreads,
    pace,
    ...(o.statusDelayMs !== undefined ? { statusDelayMs: o.statusDelayMs } : {}),
    store: o.store,
    apiUrl: config.SLACK_API_URL,
  });
  registerSlackListeners(app, o, { workspaces, ios, pace, assistantThreads, installations });

  const gate = workspaces.gate;
  return {
    platform: "slack",
    mode: socket ? "socket" : "http",
    auth: oauth ? "oauth" : "token",
    io: ios.io,
    connected: () => connected,
    port: () => port,
    pendingCalls: () => gate.pending(),
    rateWaits: () => gate.waits(),
    start: async () => {
      await app.init();
      // Single-token mode: who Neo is in its workspace (a bad token stops start-up here).
      const me = installations ? undefined : (await singleBot()).identity;
      if (socket) {
        await app.start();
      } else {
        const server = (await app.start({
          port: config.NEO_HTTP_PORT,
          host: o.host,
        })) as import("node:http").Server;
        const addr = server.address();
        port = typeof addr === "object" && addr ? addr.port : config.NEO_HTTP_PORT;
        connected = true;
      }
      log.info(
        {
          mode: socket ? "socket" : "http",
          auth: oauth ? "oauth" : "token",
          port,
          ...(me ? { team: me.teamId, bot: me.botUserId } : {}),
        },
        "slack adapter started",
      );
    },
    stop: async () => {
      connected = false;
      await app.stop();
      workspaces.stop();
      // Calls still queued behind Slack's tiers (status removals run after their answers) get a
      // bounded wait, so a restart does not leave status lines behind; what is left is said.
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_DRAIN_MS);
      });
      await Promise.race([gate.drained(), bound]);
      clearTimeout(timer);
      if (gate.pending() > 0) {
        log.warn({ pending: gate.pending() }, "slack: Web API calls still queued at shutdown are dropped");
      }
    },
  };
}
