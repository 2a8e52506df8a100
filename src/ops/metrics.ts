/**
 * The one metrics registry (Prometheus text via prom-client). Modules record through `metrics`;
 * `/metrics` renders `registry`. Label values are bounded by what the bot is configured with
 * (tools, models, platforms, outcomes), never by what a message says, and never name a user, a
 * conversation or a thread: per-user usage is in `/neo status`, only for admins.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export const registry = new Registry();
// Process health (memory, CPU, event-loop lag, handles) beside Neo's own series.
collectDefaultMetrics({ register: registry, prefix: "neo_", eventLoopMonitoringPrecision: 100 });

const latencyBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];

/** Whether the store answers, read at each scrape (set once the store exists; before: up). */
let storeHealthy: () => boolean = () => true;
export function reportStoreHealth(healthy: () => boolean): void {
  storeHealthy = healthy;
}

export const metrics = {
  turns: new Counter({
    name: "neo_turns_total",
    help: "Turns finished, by status (answered, partial, cancelled, failed); a USD budget's stop is partial.",
    labelNames: ["status"] as const,
    registers: [registry],
  }),
  steps: new Counter({
    name: "neo_steps_total",
    help: "Model calls made by the loop.",
    registers: [registry],
  }),
  toolCalls: new Counter({
    name: "neo_tool_calls_total",
    help: "Tool calls, by advertised tool name and outcome (ok, error, transport_error).",
    labelNames: ["tool", "outcome"] as const,
    registers: [registry],
  }),
  modelLatency: new Histogram({
    name: "neo_model_latency_seconds",
    help: "Model call latency, by model.",
    labelNames: ["model"] as const,
    buckets: latencyBuckets,
    registers: [registry],
  }),
  modelTokens: new Counter({
    name: "neo_model_tokens_total",
    help: "Tokens by model and kind (prompt, completion; cached: the prompt tokens read from the provider's prompt cache, a part of prompt).",
    labelNames: ["model", "kind"] as const,
    registers: [registry],
  }),
  modelCacheHitRatio: new Gauge({
    name: "neo_model_prompt_cache_hit_ratio",
    help: "Share of prompt tokens the provider read from its prompt cache, by model, since this process started.",
    labelNames: ["model"] as const,
    registers: [registry],
  }),
  modelCost: new Counter({
    name: "neo_model_cost_usd_total",
    help: "Estimated model cost in USD, by model (from NEO_*_PRICE).",
    labelNames: ["model"] as const,
    registers: [registry],
  }),
  compactions: new Counter({
    name: "neo_compactions_total",
    help: "Compactions, by reason (hard, soft, manual) and result (summary, safe_tail).",
    labelNames: ["reason", "result"] as const,
    registers: [registry],
  }),
  writebackDepth: new Gauge({
    name: "neo_writeback_queue_depth",
    help: "Write-back jobs waiting or running.",
    registers: [registry],
  }),
  writebackDropped: new Counter({
    name: "neo_writeback_dropped_total",
    help: "Write-back jobs dropped because their user's queue (depth 8) was full.",
    registers: [registry],
  }),
  writebackUnread: new Counter({
    name: "neo_writeback_unread_total",
    help: "Cheap-model write-back answers not understood at all (no JSON, no conversations list, no section named); nothing was written for them.",
    registers: [registry],
  }),
  approvals: new Counter({
    name: "neo_approvals_total",
    help: "Approvals by outcome (requested, approved, rejected, expired, cancelled, interrupted, refused_cap).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  }),
  answerLatency: new Histogram({
    name: "neo_answer_latency_seconds",
    help: "From the adapter receiving a message to its turn's answer posted (answered or partial), by platform.",
    labelNames: ["platform"] as const,
    buckets: latencyBuckets,
    registers: [registry],
  }),
  modelErrors: new Counter({
    name: "neo_model_errors_total",
    help: "Model calls that failed after the SDK's retries (user cancellations not counted), by model and error code.",
    labelNames: ["model", "code"] as const,
    registers: [registry],
  }),
  storeUp: new Gauge({
    name: "neo_store_up",
    help: "1 while the store (Redis, or the embedded file store) answers, 0 while it is unreachable.",
    registers: [registry],
    collect() {
      this.set(storeHealthy() ? 1 : 0);
    },
  }),
  queueWait: new Histogram({
    name: "neo_queue_wait_seconds",
    help: "Time an inbound message waited before its turn started.",
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
    registers: [registry],
  }),
  rateLimited: new Counter({
    name: "neo_platform_rate_limited_total",
    help: "429 responses received from a platform, by platform.",
    labelNames: ["platform"] as const,
    registers: [registry],
  }),
  slackGateWaits: new Counter({
    name: "neo_slack_gate_waits_total",
    help: "Slack calls that waited for room in their rate window or for a Retry-After, by method.",
    labelNames: ["method"] as const,
    registers: [registry],
  }),
  slackGateDropped: new Counter({
    name: "neo_slack_gate_dropped_total",
    help: "Cosmetic Slack calls (draft and status edits, reactions) dropped because their method's window was full, by method.",
    labelNames: ["method"] as const,
    registers: [registry],
  }),
  slackGateRefused: new Counter({
    name: "neo_slack_gate_refused_total",
    help: "Slack drafts and status lines not shown because the call that ends them (by method) had no room to reserve.",
    labelNames: ["method"] as const,
    registers: [registry],
  }),
  eventErrors: new Counter({
    name: "neo_event_errors_total",
    help: "Platform payloads whose handling threw (caught; the process kept serving), by platform and payload kind (gateway event or Slack event type).",
    labelNames: ["platform", "kind"] as const,
    registers: [registry],
  }),
  inbound: new Counter({
    name: "neo_inbound_messages_total",
    help: "Inbound messages by platform and disposition (accepted, duplicate, ignored).",
    labelNames: ["platform", "disposition"] as const,
    registers: [registry],
  }),
};
