/**
 * What the Slack adapter is built from: its settings, the core services it feeds, and the check
 * that the settings name one coherent mode (HTTP or Socket Mode; one token or the OAuth install).
 */
import type { CustomRoute } from "@slack/bolt";
import type { AccessPolicy } from "../../../core/access/policy.js";
import type { ApprovalBroker } from "../../../core/approvals/broker.js";
import type { CommandDeps } from "../../../core/commands/types.js";
import type { Conversations } from "../../../core/conversations/types.js";
import type { Store } from "../../../store/types.js";
import type { AssistantSettings } from "../assistant.js";
import type { DraftPace } from "../draft/pacer.js";
import type { SlackRateRules } from "../outbound/rules.js";

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
  /** How long a turn's status waits before it is shown (default `STATUS_DELAY_MS`, a second). */
  statusDelayMs?: number;
}

export class SlackConfigError extends Error {
  readonly code = "SLACK_CONFIG";
}

/** The mode `config` names; a contradictory or incomplete one stops start-up with the setting to fix. */
export function slackModes(config: SlackAdapterConfig): { socket: boolean; oauth: boolean } {
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
  return { socket, oauth };
}
