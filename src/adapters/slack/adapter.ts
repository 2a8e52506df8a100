/**
 * The Slack adapter: a Bolt app (HTTP Events API, or Socket Mode when `SLACK_APP_TOKEN` is set)
 * whose listeners feed the conversation layer, and whose `io(conversation)` renders the Reporter and
 * approvals into one thread. Web API calls go to `SLACK_API_URL` (default Slack's) with a short retry
 * policy; rate limits are handled once, in the gate (see `rate-gate.ts`).
 */
import { App, type CustomRoute, HTTPReceiver } from "@slack/bolt";
import type { AccessPolicy } from "../../core/access/policy.js";
import type { ApprovalBroker } from "../../core/approvals/broker.js";
import type { CommandDeps } from "../../core/commands/types.js";
import type { ConversationIO, Conversations, PlatformAdapter } from "../../core/conversations/types.js";
import { type ConversationKey, parseConversationKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import { registerApprovalActions } from "./approval-listener.js";
import { createSlackApprovalChannel } from "./approvals.js";
import { boltLogger } from "./bolt-logger.js";
import { registerCommands } from "./command-listener.js";
import type { SlackIdentity } from "./inbound.js";
import { registerInbound } from "./inbound-listener.js";
import {
  createSlackOutbound,
  SLACK_RATE_RULES,
  type SlackOutbound,
  type SlackRateRules,
} from "./outbound.js";
import { createSlackReporter } from "./reporter.js";
import { createSocketReceiver, type JournalFirstSocketReceiver } from "./socket-receiver.js";
import { createThreadStatus } from "./status.js";
import { createSlackUsers } from "./users.js";

export interface SlackAdapterConfig {
  SLACK_BOT_TOKEN: string;
  /** Required in HTTP mode. */
  SLACK_SIGNING_SECRET?: string;
  /** Set = Socket Mode. */
  SLACK_APP_TOKEN?: string;
  /** Web API base, e.g. `https://slack.com/api/` (default) or a proxy / local fake. */
  SLACK_API_URL?: string;
  /** HTTP mode: the port of the Events API receiver (0 = any free port). */
  NEO_HTTP_PORT: number;
}

export interface SlackAdapterOptions {
  config: SlackAdapterConfig;
  /** Set before `start()`; adapters and conversations reference each other (see `io`). */
  conversations: Pick<Conversations, "submit">;
  broker: Pick<ApprovalBroker, "decide" | "get">;
  access: Pick<AccessPolicy, "isAllowed" | "isAdmin">;
  commands: CommandDeps;
  store: Store;
  /** Extra HTTP routes served on the receiver's port (e.g. `/healthz`, `/metrics`); HTTP mode only. */
  customRoutes?: CustomRoute[];
  /** Interface to listen on in HTTP mode (default all). */
  host?: string;
  /** Override Slack's tiers (tests scale them down together with the fake's). */
  rateRules?: Partial<SlackRateRules>;
}

export interface SlackAdapter extends PlatformAdapter {
  readonly platform: "slack";
  readonly mode: "http" | "socket";
  /** HTTP mode: the port actually listened on (after `start()`). */
  port(): number | undefined;
  /** Calls queued or in flight towards Slack (for metrics and graceful shutdown). */
  pendingCalls(): number;
}

export class SlackConfigError extends Error {
  readonly code = "SLACK_CONFIG";
}

/** Short retries for a chat bot: a few seconds, not Slack's default of ten over thirty minutes. */
export const SLACK_RETRY_CONFIG = { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 2000 } as const;
/** Per-request timeout towards the Web API. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Conversation IOs kept (each holds a thread's status state). */
const IO_CACHE = 2000;
/** How long `stop` waits for queued Web API calls (status removals behind `chat.delete`'s tier). */
const STOP_DRAIN_MS = 5000;

export function createSlackAdapter(o: SlackAdapterOptions): SlackAdapter {
  const { config } = o;
  const socket = Boolean(config.SLACK_APP_TOKEN);
  if (!socket && !config.SLACK_SIGNING_SECRET) {
    throw new SlackConfigError(
      "SLACK_SIGNING_SECRET: required for the HTTP Events API (or set SLACK_APP_TOKEN for Socket Mode)",
    );
  }
  const logger = boltLogger();
  let connected = false;
  let port: number | undefined;
  const receiver: JournalFirstSocketReceiver | HTTPReceiver = socket
    ? createSocketReceiver({ appToken: config.SLACK_APP_TOKEN!, apiUrl: config.SLACK_API_URL, logger })
    : new HTTPReceiver({
        signingSecret: config.SLACK_SIGNING_SECRET!,
        customRoutes: o.customRoutes ?? [],
        // The 200 leaves only after the listener journaled the event (or the command acked).
        processBeforeResponse: true,
        logger,
      });
  if ("client" in receiver) {
    receiver.client.on("connected", () => {
      connected = true;
    });
    receiver.client.on("disconnected", () => {
      connected = false;
    });
  }
  const app = new App({
    token: config.SLACK_BOT_TOKEN,
    receiver,
    logger,
    ignoreSelf: false, // our own posts are ignored by `decideInbound`, with a log line
    deferInitialization: true,
    clientOptions: {
      ...(config.SLACK_API_URL ? { slackApiUrl: config.SLACK_API_URL } : {}),
      retryConfig: { ...SLACK_RETRY_CONFIG },
      rejectRateLimitedCalls: true, // the gate waits out Retry-After per method, not the whole client
      timeout: REQUEST_TIMEOUT_MS,
    },
  });
  app.error(async (err) => {
    log.error({ err }, "slack listener failed");
    throw err; // the receiver answers 500, so Slack retries what was not journaled
  });

  const out: SlackOutbound = createSlackOutbound(app.client, { ...SLACK_RATE_RULES, ...o.rateRules });
  const users = createSlackUsers(out);
  let me: SlackIdentity | undefined;
  const identity = (): SlackIdentity => {
    if (!me) throw new SlackConfigError("Slack adapter used before start()");
    return me;
  };

  const ios = new Map<ConversationKey, ConversationIO>();
  const io = (conversation: ConversationKey): ConversationIO => {
    const hit = ios.get(conversation);
    if (hit) return hit;
    const { channel, thread } = parseConversationKey(conversation);
    const threadTs = thread === channel ? undefined : thread;
    const made: ConversationIO = {
      reporter: createSlackReporter({
        out,
        channel,
        threadTs: threadTs ?? "",
        status: createThreadStatus(out, channel, threadTs ?? ""),
      }),
      approvals: createSlackApprovalChannel(out, channel, threadTs ?? ""),
      acknowledgeQueued: async (message) => {
        const ts = message.id.split("/")[2];
        if (ts) await out.react(channel, ts, "eyes");
      },
    };
    if (ios.size >= IO_CACHE) ios.delete(ios.keys().next().value as ConversationKey);
    ios.set(conversation, made);
    return made;
  };

  registerInbound(app, {
    store: o.store,
    access: o.access,
    conversations: o.conversations,
    out,
    users,
    me: identity,
  });
  registerApprovalActions(app, { broker: o.broker, out, me: identity });
  registerCommands(app, {
    commands: o.commands,
    access: o.access,
    conversations: o.conversations,
    out,
    users,
    me: identity,
    io,
  });

  return {
    platform: "slack",
    mode: socket ? "socket" : "http",
    io,
    connected: () => connected,
    port: () => port,
    pendingCalls: () => out.pending(),
    start: async () => {
      await app.init(); // auth.test: who Neo is in this workspace
      const auth = await app.client.auth.test();
      if (!auth.team_id || !auth.user_id)
        throw new SlackConfigError("SLACK_BOT_TOKEN: auth.test returned no team/user");
      me = { teamId: auth.team_id, botUserId: auth.user_id, ...(auth.bot_id ? { botId: auth.bot_id } : {}) };
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
        { mode: socket ? "socket" : "http", port, team: me.teamId, bot: me.botUserId },
        "slack adapter started",
      );
    },
    stop: async () => {
      connected = false;
      await app.stop();
      // Calls still queued behind Slack's tiers (status removals run after their answers) get a
      // bounded wait, so a restart does not leave status lines behind; what is left is said.
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_DRAIN_MS);
      });
      await Promise.race([out.drained(), bound]);
      clearTimeout(timer);
      if (out.pending() > 0) {
        log.warn({ pending: out.pending() }, "slack: Web API calls still queued at shutdown are dropped");
      }
    },
  };
}
