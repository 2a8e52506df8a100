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
 */
import { App, type CodedError, type CustomRoute, HTTPReceiver } from "@slack/bolt";
import type { AccessPolicy } from "../../core/access/policy.js";
import type { ApprovalBroker } from "../../core/approvals/broker.js";
import type { CommandDeps } from "../../core/commands/types.js";
import type { ConversationIO, Conversations, PlatformAdapter } from "../../core/conversations/types.js";
import { type ConversationKey, parseConversationKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import { createPayloadErrors } from "../payload-errors.js";
import { registerApprovalActions } from "./approval-listener.js";
import { APPROVE_ACTION, createSlackApprovalChannel, REJECT_ACTION } from "./approvals.js";
import { type AssistantSettings, registerAssistant } from "./assistant.js";
import { createAssistantThreads } from "./assistant-threads.js";
import { boltLogger } from "./bolt-logger.js";
import { CONFIRM_ACTION, registerCommands } from "./command-listener.js";
import { DEFAULT_DRAFT_PACE, type DraftPace } from "./draft.js";
import { slackFileSource } from "./files.js";
import { registerInbound } from "./inbound-listener.js";
import { createSlackInstallations, INSTALL_PATH, REDIRECT_PATH, SLACK_BOT_SCOPES } from "./installations.js";
import { SLACK_RATE_RULES, type SlackRateRules } from "./outbound/rules.js";
import { createSlackReporter } from "./reporter.js";
import { createSocketReceiver, type JournalFirstSocketReceiver } from "./socket-receiver.js";
import { createAssistantStatus, createThreadStatus, eitherStatus } from "./status.js";
import { registerUninstall } from "./uninstall-listener.js";
import { registerUnknownActions } from "./unknown-action-listener.js";
import { createSlackWorkspaces, type WorkspaceBot } from "./workspaces.js";

export interface SlackAdapterConfig {
  /** Single-token mode: the one workspace's bot token. */
  SLACK_BOT_TOKEN?: string;
  /** OAuth mode (HTTP only): all three set, no `SLACK_BOT_TOKEN`. */
  SLACK_CLIENT_ID?: string;
  SLACK_CLIENT_SECRET?: string;
  SLACK_STATE_SECRET?: string;
  /** Required in HTTP mode. */
  SLACK_SIGNING_SECRET?: string;
  /** Set = Socket Mode. */
  SLACK_APP_TOKEN?: string;
  /** Web API base, e.g. `https://slack.com/api/` (default) or a proxy / local fake. */
  SLACK_API_URL?: string;
  /** HTTP mode: the port of the Events API receiver (0 = any free port). */
  NEO_HTTP_PORT: number;
  /** Bot ids (`B…`) or bot user ids whose messages are answered like a person's. */
  NEO_ANSWER_BOTS?: string[];
  /** The assistant panel's greeting and suggested prompts (`NEO_SLACK_ASSISTANT_*`). */
  assistant: AssistantSettings;
}

export interface SlackAdapterOptions {
  config: SlackAdapterConfig;
  /** Set before `start()`; adapters and conversations reference each other (see `io`). */
  conversations: Pick<Conversations, "submit" | "threadReach">;
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
  /** When answer drafts write (tests hold the first write back so short answers are said whole). */
  draftPace?: Partial<DraftPace>;
}

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

/** A payload's kind for the failure count: the event type, the interaction type, or the command. */
function payloadKind(body: unknown): string {
  const b = (body ?? {}) as { type?: unknown; event?: { type?: unknown }; command?: unknown };
  if (b.type === "event_callback" && typeof b.event?.type === "string") return `event:${b.event.type}`;
  if (typeof b.type === "string") return b.type;
  return typeof b.command === "string" ? "slash_command" : "unknown";
}

export function createSlackAdapter(o: SlackAdapterOptions): SlackAdapter {
  const { config } = o;
  const socket = Boolean(config.SLACK_APP_TOKEN);
  const oauth = Boolean(config.SLACK_CLIENT_ID);
  if (!socket && !config.SLACK_SIGNING_SECRET) {
    throw new SlackConfigError(
      "SLACK_SIGNING_SECRET: required for the HTTP Events API (or set SLACK_APP_TOKEN for Socket Mode)",
    );
  }
  if (
    oauth &&
    (socket || config.SLACK_BOT_TOKEN || !config.SLACK_CLIENT_SECRET || !config.SLACK_STATE_SECRET)
  ) {
    throw new SlackConfigError(
      "SLACK_CLIENT_ID: the OAuth install needs SLACK_CLIENT_SECRET and SLACK_STATE_SECRET, HTTP mode, and no SLACK_BOT_TOKEN",
    );
  }
  if (!oauth && !config.SLACK_BOT_TOKEN) {
    throw new SlackConfigError(
      "SLACK_BOT_TOKEN: set it, or SLACK_CLIENT_ID/SECRET/STATE_SECRET for the OAuth install",
    );
  }
  const logger = boltLogger();
  const installations = oauth ? createSlackInstallations(o.store) : undefined;
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
        ...(installations
          ? {
              clientId: config.SLACK_CLIENT_ID!,
              clientSecret: config.SLACK_CLIENT_SECRET!,
              stateSecret: config.SLACK_STATE_SECRET!,
              scopes: [...SLACK_BOT_SCOPES],
              installationStore: installations,
              installerOptions: {
                // `/slack/install` sends the browser straight to Slack's consent screen.
                directInstall: true,
                installPath: INSTALL_PATH,
                redirectUriPath: REDIRECT_PATH,
                clientOptions: {
                  ...(config.SLACK_API_URL ? { slackApiUrl: config.SLACK_API_URL } : {}),
                  retryConfig: { ...SLACK_RETRY_CONFIG },
                  timeout: REQUEST_TIMEOUT_MS,
                },
              },
            }
          : {}),
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
    ...(oauth ? {} : { token: config.SLACK_BOT_TOKEN }),
    receiver,
    logger,
    ignoreSelf: false, // our own posts are ignored by `decideInbound`, with a log line
    deferInitialization: true,
    // The error handler gets the payload, so a failure is counted by its kind.
    extendedErrorHandler: true,
    clientOptions: {
      ...(config.SLACK_API_URL ? { slackApiUrl: config.SLACK_API_URL } : {}),
      retryConfig: { ...SLACK_RETRY_CONFIG },
      rejectRateLimitedCalls: true, // the gate waits out Retry-After per method, not the whole client
      timeout: REQUEST_TIMEOUT_MS,
    },
  });
  const payloadErrors = createPayloadErrors("slack");
  app.error(async ({ error: err, body }: { error: CodedError; body: unknown }) => {
    if (err.code === "slack_bolt_authorization_error") {
      // An event from a workspace without an installation: nothing to answer it with, no retry helps.
      log.warn({ err: err.message }, "slack: event from a workspace Neo is not installed in");
      return;
    }
    payloadErrors(payloadKind(body), err);
    throw err; // the receiver answers 500, so Slack retries what was not journaled
  });

  // Single-token mode: the one bot, identified once by auth.test (also for turns resumed before start).
  let single: Promise<WorkspaceBot> | undefined;
  const singleBot = (): Promise<WorkspaceBot> => {
    single ??= app.client.auth.test({ token: config.SLACK_BOT_TOKEN! }).then((auth) => {
      if (!auth.team_id || !auth.user_id)
        throw new SlackConfigError("SLACK_BOT_TOKEN: auth.test returned no team/user");
      return {
        identity: {
          teamId: auth.team_id,
          botUserId: auth.user_id,
          ...(auth.bot_id ? { botId: auth.bot_id } : {}),
        },
        token: config.SLACK_BOT_TOKEN!,
      };
    });
    single.catch(() => {
      single = undefined; // a failed auth.test is tried again next time
    });
    return single;
  };
  const workspaces = createSlackWorkspaces({
    client: app.client,
    rules: { ...SLACK_RATE_RULES, ...o.rateRules },
    bot: installations ? (teamId) => installations.bot(teamId) : () => singleBot(),
  });

  const pace: DraftPace = { ...DEFAULT_DRAFT_PACE, ...o.draftPace };
  const ios = new Map<string, ConversationIO>();
  /** Assistant-panel threads this process saw recently: their Status is the thread's. */
  const assistantThreads = createAssistantThreads();
  /** The IO answering in `threadTs` (undefined: the channel itself, an unthreaded DM). */
  const ioIn = (conversation: ConversationKey, threadTs: string | undefined): ConversationIO => {
    const cacheKey = `${conversation}#${threadTs ?? ""}`;
    const hit = ios.get(cacheKey);
    if (hit) return hit;
    const { workspace, channel } = parseConversationKey(conversation);
    const out = workspaces.out(workspace);
    const made: ConversationIO = {
      reporter: createSlackReporter({
        out,
        channel,
        threadTs: threadTs ?? "",
        status: threadTs
          ? eitherStatus(
              () => assistantThreads.has(workspace, channel, threadTs),
              createAssistantStatus(out, channel, threadTs),
              createThreadStatus(out, channel, threadTs),
            )
          : createThreadStatus(out, channel, ""),
        pace,
        me: () => workspaces.identity(workspace),
        store: o.store,
      }),
      approvals: createSlackApprovalChannel(out, channel, threadTs ?? ""),
      files: slackFileSource(() => workspaces.token(workspace), config.SLACK_API_URL),
      acknowledgeQueued: async (message) => {
        const ts = message.id.split("/")[2];
        // Cosmetic: dropped when reactions.add has no room now (a busy workspace).
        if (ts) await out.react(channel, ts, "eyes", { optional: true });
      },
    };
    if (ios.size >= IO_CACHE) ios.delete(ios.keys().next().value as string);
    ios.set(cacheKey, made);
    return made;
  };
  const io = (conversation: ConversationKey): ConversationIO => {
    const { channel, thread } = parseConversationKey(conversation);
    return ioIn(conversation, thread === channel ? undefined : thread);
  };

  const take = registerInbound(app, {
    store: o.store,
    access: o.access,
    conversations: o.conversations,
    workspaces,
    policy: { answerBots: new Set(config.NEO_ANSWER_BOTS ?? []) },
    channels: o.commands.channels,
    threadIo: ioIn,
  });
  // After the inbound middleware (event dedupe): assistant-thread messages then take the inbound path.
  registerAssistant(app, {
    store: o.store,
    workspaces,
    settings: config.assistant,
    take,
    reporter: (conversation, threadTs) => ioIn(conversation, threadTs).reporter,
    threads: assistantThreads,
  });
  registerApprovalActions(app, { broker: o.broker, workspaces });
  registerUnknownActions(app, [APPROVE_ACTION, REJECT_ACTION, CONFIRM_ACTION], workspaces);
  registerCommands(app, {
    commands: o.commands,
    access: o.access,
    conversations: o.conversations,
    workspaces,
    io,
    pace,
    store: o.store,
  });
  if (installations) registerUninstall(app, { installations, workspaces, store: o.store });

  const gate = workspaces.gate;
  return {
    platform: "slack",
    mode: socket ? "socket" : "http",
    auth: oauth ? "oauth" : "token",
    io,
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
