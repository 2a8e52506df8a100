/**
 * Every Web API call Neo makes in one workspace, with that workspace's bot token, each routed
 * through the rate gate under the method's Slack tier (tiers are per workspace, so gate keys carry
 * the team). The calls come in groups (outbound/): messages, streams, the assistant panel, lookups,
 * uploads and the private ones (a person's DM, their App Home); this file puts them together with the room a caller may take ahead (`reserve`).
 */

import { createAssistantCalls, type SlackAssistantCalls } from "./outbound/assistant-calls.js";
import { createOutboundContext, type WebClient } from "./outbound/context.js";
import { createLookups, type SlackLookups } from "./outbound/lookups.js";
import { createMessageCalls, type SlackMessages } from "./outbound/messages.js";
import { createPrivateCalls, type SlackPrivateCalls } from "./outbound/private.js";
import { SLACK_RATE_RULES, type SlackRateRules } from "./outbound/rules.js";
import { createStreamCalls, type SlackStreams } from "./outbound/streams.js";
import { createUploads, type SlackUploads } from "./outbound/uploads.js";
import type { RateRule } from "./rate-gate/key-state.js";
import { createRateGate, type RateGate, type Reservation } from "./rate-gate.js";

/** Workspace-wide methods whose room a draft or a status line takes ahead, for the call that ends it. */
export type ReservableMethod =
  | "chat.update"
  | "chat.delete"
  | "chat.stopStream"
  | "assistant.threads.setStatus";

export interface SlackOutbound
  extends SlackMessages,
    SlackStreams,
    SlackAssistantCalls,
    SlackLookups,
    SlackUploads,
    SlackPrivateCalls {
  /**
   * Room for one later call of `method` in this workspace, if it is free now (see rate-gate.ts);
   * undefined when the workspace is busy. Spend it with the call's `reservation`, or `release` it.
   */
  reserve(method: ReservableMethod): Reservation | undefined;
  /** Calls queued or in flight. */
  pending(): number;
  /** Resolves once no call is queued or in flight. */
  drained(): Promise<void>;
}

export interface SlackOutboundOptions {
  rules?: SlackRateRules;
  /** Shared by every workspace's outbound, so shutdown can wait for all queued calls. */
  gate?: RateGate;
  /** The workspace (team id) these calls act in. */
  team: string;
  /** Its bot token (single-token mode: `SLACK_BOT_TOKEN`; OAuth: the installation's). */
  token: () => Promise<string>;
}

export function createSlackOutbound(client: WebClient, o: SlackOutboundOptions): SlackOutbound {
  const rules = o.rules ?? SLACK_RATE_RULES;
  const gate: RateGate = o.gate ?? createRateGate();
  const ctx = createOutboundContext({ client, rules, gate, team: o.team, token: o.token });
  const reservable: Record<ReservableMethod, RateRule> = {
    "chat.update": rules.update,
    "chat.delete": rules.delete,
    "chat.stopStream": rules.stream,
    "assistant.threads.setStatus": rules.assistant,
  };
  return {
    reserve: (method) => gate.reserve(ctx.keyOf(method), method, reservable[method]),
    ...createMessageCalls(ctx),
    ...createStreamCalls(ctx),
    ...createAssistantCalls(ctx),
    ...createLookups(ctx),
    ...createUploads(ctx),
    ...createPrivateCalls(ctx),
    pending: () => gate.pending(),
    drained: () => gate.drained(),
  };
}
