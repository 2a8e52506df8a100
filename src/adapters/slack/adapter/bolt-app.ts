/**
 * The Bolt app and its receiver: the HTTP Events API (serving the OAuth install routes when
 * configured) or Socket Mode. Web API calls go to `SLACK_API_URL` with a short retry policy; rate
 * limits are left to the gate (`rate-gate.ts`), so the client rejects rather than waits.
 */
import { App, type CustomRoute, HTTPReceiver } from "@slack/bolt";
import { requestFetch } from "../../../ops/http-fetch.js";
import { boltLogger } from "../bolt-logger.js";
import { INSTALL_PATH, REDIRECT_PATH, SLACK_BOT_SCOPES, type SlackInstallations } from "../installations.js";
import { checkSlackSignatures, EVENTS_PATH } from "../request-signature.js";
import { createSocketReceiver, type JournalFirstSocketReceiver } from "../socket-receiver.js";
import type { SlackAdapterConfig } from "./options.js";
import { fetchWithin } from "./timed-fetch.js";

/** Short retries for a chat bot: a few seconds, not Slack's default of ten over thirty minutes. */
export const SLACK_RETRY_CONFIG = { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 2000 } as const;
/** Per-request timeout towards the Web API. */
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * The Web API client's options for the timeout: held by our fetch (its timer cleared with the call),
 * not by the client's `timeout`, whose timer outlives every call (`timed-fetch.ts`). The calls go
 * out on undici's request API, not node's fetch (`ops/http-fetch.ts`: ~0.3 ms of CPU less a post).
 */
const TIMED = { timeout: 0, fetch: fetchWithin(REQUEST_TIMEOUT_MS, requestFetch()) } as const;

export type SlackReceiver = JournalFirstSocketReceiver | HTTPReceiver;

export interface BoltAppOptions {
  config: SlackAdapterConfig;
  socket: boolean;
  /** OAuth mode: where installations are kept (undefined: single-token mode). */
  installations: SlackInstallations | undefined;
  customRoutes?: CustomRoute[];
}

function createReceiver(o: BoltAppOptions, logger: ReturnType<typeof boltLogger>): SlackReceiver {
  if (o.socket)
    return createSocketReceiver({
      appToken: o.config.SLACK_APP_TOKEN!,
      apiUrl: o.config.SLACK_API_URL,
      logger,
    });
  const receiver = createHttpReceiver(o, logger);
  checkSlackSignatures(receiver, o.config.SLACK_SIGNING_SECRET!);
  return receiver;
}

function createHttpReceiver(o: BoltAppOptions, logger: ReturnType<typeof boltLogger>): HTTPReceiver {
  const { config, installations } = o;
  return new HTTPReceiver({
    signingSecret: config.SLACK_SIGNING_SECRET!,
    // Checked before Bolt sees the request (request-signature.ts): both ways in time, and cheaper.
    signatureVerification: false,
    endpoints: [EVENTS_PATH],
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
              ...TIMED,
            },
          },
        }
      : {}),
  });
}

export function createBoltApp(o: BoltAppOptions): { app: App; receiver: SlackReceiver } {
  const { config } = o;
  const logger = boltLogger();
  const receiver = createReceiver(o, logger);
  const app = new App({
    ...(o.installations ? {} : { token: config.SLACK_BOT_TOKEN }),
    receiver,
    logger,
    ignoreSelf: false, // our own posts are ignored by `decideInbound`, with a log line
    deferInitialization: true,
    // Bolt's conversation store (context.conversation) is unused: its middleware would look up and
    // expire an in-memory entry on every event, on the answer's path.
    convoStore: false,
    // The error handler gets the payload, so a failure is counted by its kind.
    extendedErrorHandler: true,
    clientOptions: {
      ...(config.SLACK_API_URL ? { slackApiUrl: config.SLACK_API_URL } : {}),
      retryConfig: { ...SLACK_RETRY_CONFIG },
      rejectRateLimitedCalls: true, // the gate waits out Retry-After per method, not the whole client
      ...TIMED,
    },
  });
  return { app, receiver };
}
