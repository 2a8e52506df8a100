/**
 * Model-call metrics, recorded by the client (the one place model calls happen): latency per call
 * by model, and tokens by model, user and conversation from each ledger entry.
 */
import { APIUserAbortError } from "openai";
import { metrics } from "../../ops/metrics.js";
import type { UsageEntry } from "./usage-ledger.js";

/**
 * Time one model call (answer or failure, SDK retries included) under its model's label. A call
 * cancelled by the user is not observed: its duration says nothing about the endpoint.
 */
export async function timeModelCall<T>(model: string, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const observe = () => metrics.modelLatency.observe({ model }, (performance.now() - started) / 1000);
  try {
    const out = await call();
    observe();
    return out;
  } catch (e) {
    if (!(e instanceof APIUserAbortError)) observe();
    throw e;
  }
}

/** Tokens (and cost) of one recorded call. */
export function countModelUsage(e: UsageEntry): void {
  const { promptTokens, completionTokens } = e.usage;
  const tokens = promptTokens + completionTokens;
  metrics.modelTokens.inc({ model: e.model, kind: "prompt" }, promptTokens);
  metrics.modelTokens.inc({ model: e.model, kind: "completion" }, completionTokens);
  if (e.tags.user) {
    metrics.userTokens.inc({ user: e.tags.user }, tokens);
    metrics.userCost.inc({ user: e.tags.user }, e.costUsd);
  }
  if (e.tags.conversation) metrics.conversationTokens.inc({ conversation: e.tags.conversation }, tokens);
}
