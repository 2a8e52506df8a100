/**
 * Inbound events and queue wait as operators see them. One `neo_inbound_messages_total` increment
 * per event. Accepted and duplicate deliveries get one info line here; what an adapter drops on
 * purpose (Neo's own posts, edits, ...) keeps the adapter's own debug line saying why, since at info
 * it would double the log volume. Message text never appears.
 */

import { metrics } from "../../ops/metrics.js";
import {
  activeSpan,
  continuing,
  hashedConversation,
  pastSpan,
  type SpanOptions,
  traceInstance,
  traceparentOf,
} from "../../ops/tracing/spans.js";
import { type ConversationKey, type Platform, parseConversationKey } from "../keys.js";
import { log } from "../log.js";
import type { BookkeepingEntry } from "./log-entry.js";
import type { InboundMessage } from "./types.js";

const inboundLog = log.child({ component: "inbound" });

export interface InboundEvent {
  platform: Platform;
  /** The platform's message id (or the delivery's event id when it names no message). */
  id: string;
  /** Null when the event names no conversation Neo would take. */
  conversation: ConversationKey | null;
  disposition: "accepted" | "duplicate";
}

export function recordInbound(e: InboundEvent): void {
  metrics.inbound.inc({ platform: e.platform, disposition: e.disposition });
  inboundLog.info(e, "inbound");
}

/** An event the adapter drops on purpose; the adapter's debug line says why. */
export function countIgnored(platform: Platform): void {
  metrics.inbound.inc({ platform, disposition: "ignored" });
}

/** What the journal said of a submitted message (the one place accepted/duplicate are known). */
export function recordSubmitted(m: InboundMessage, accepted: boolean): void {
  recordInbound({
    platform: parseConversationKey(m.conversation).platform,
    id: m.id,
    conversation: m.conversation,
    disposition: accepted ? "accepted" : "duplicate",
  });
}

/** A new turn starts on `m`: how long it waited since the adapter received it (metric and span). */
export function recordTurnStart(m: InboundMessage): void {
  metrics.queueWait.observe(Math.max(0, Date.now() - m.receivedAt) / 1000);
  pastSpan("neo.queue_wait", m.receivedAt);
}

/** The log entry that opens a turn, with its span's `traceparent` when traces are exported. */
export function turnStartEntry(from: number, id: string): BookkeepingEntry {
  const trace = traceparentOf(activeSpan());
  return { type: "turn-start", from, id, at: Date.now(), ...(trace ? { trace } : {}) };
}

/** A turn opened by `m` posted its answer (or honest partial): the time since `m` was received. */
export function recordAnswered(m: InboundMessage): void {
  const platform = parseConversationKey(m.conversation).platform;
  metrics.answerLatency.observe({ platform }, Math.max(0, Date.now() - m.receivedAt) / 1000);
}

/**
 * The turn's root span (`invoke_agent`, GenAI conventions): a new turn starts a trace; a resumed one
 * continues the one its `turn-start` recorded (`trace`), though another instance began it.
 */
export function turnSpan(
  key: ConversationKey,
  mode: "new" | "resume" | "rerun",
  trace?: string,
  /** A new turn's span starts when its message arrived, so the trace covers inbound to post. */
  receivedAt?: number,
): SpanOptions {
  return {
    parent: continuing(trace),
    ...(receivedAt === undefined ? {} : { startTime: receivedAt }),
    attributes: () => ({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "Neo",
      "neo.platform": parseConversationKey(key).platform,
      "neo.conversation": hashedConversation(key),
      "neo.instance": traceInstance(),
      "neo.turn.mode": mode,
    }),
  };
}
