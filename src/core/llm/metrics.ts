/**
 * Model-call metrics, recorded by the client (the one place model calls happen): latency per call
 * by model, and tokens and cost by model from each ledger entry.
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

/** Prompt and cached tokens by model since start, for the hit-rate gauge (two models: bounded). */
const promptSeen = new Map<string, { prompt: number; cached: number }>();

/** Tokens and cost of one recorded call, by model (never by user or conversation: ids stay out of labels). */
export function countModelUsage(e: UsageEntry): void {
  const { promptTokens, completionTokens } = e.usage;
  const cached = e.usage.cachedPromptTokens ?? 0;
  metrics.modelTokens.inc({ model: e.model, kind: "prompt" }, promptTokens);
  metrics.modelTokens.inc({ model: e.model, kind: "cached" }, cached);
  metrics.modelTokens.inc({ model: e.model, kind: "completion" }, completionTokens);
  metrics.modelCost.inc({ model: e.model }, e.costUsd);
  const seen = promptSeen.get(e.model) ?? { prompt: 0, cached: 0 };
  seen.prompt += promptTokens;
  seen.cached += cached;
  promptSeen.set(e.model, seen);
  if (seen.prompt > 0) metrics.modelCacheHitRatio.set({ model: e.model }, seen.cached / seen.prompt);
}

/** A call that failed after the SDK's retries (its `LlmError` code; cancellations are not failures). */
export function countModelError(model: string, code: string): void {
  metrics.modelErrors.inc({ model, code });
}
