/**
 * Model metrics are recorded by the client, the one place model calls happen: latency per call by
 * model, tokens by model and kind, and cost by model, read back as the Prometheus text `/metrics`
 * serves; no series is labelled with a user or a conversation. Each test uses its own model, user
 * and conversation names, as the registry is process-wide.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { CompletionRequest } from "../../src/core/llm/types.js";
import { registry } from "../../src/ops/metrics.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

/** The sample lines of `name` whose labels include every `labels` pair. */
async function samples(name: string, labels: Record<string, string>): Promise<string[]> {
  const text = await registry.metrics();
  return text
    .split("\n")
    .filter((l) => l.startsWith(`${name}{`))
    .filter((l) => Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
}

async function value(name: string, labels: Record<string, string>): Promise<number> {
  const lines = await samples(name, labels);
  expect(lines, `${name} ${JSON.stringify(labels)}`).toHaveLength(1);
  return Number(lines[0]!.split(" ").at(-1));
}

describe("model metrics", () => {
  it("counts latency per call, tokens by model and kind, and cost by model; no user or conversation in any label", async () => {
    const id = randomUUID().slice(0, 8);
    const model = `metrics-main-${id}`;
    const user = `slack:T1:U${id}`;
    const conversation = `slack:T1:C1:${id}`;
    ep = await startScriptedOpenAI([
      { reply: { text: "one", usage: { prompt: 100, completion: 20 } } },
      { reply: { text: "two", usage: { prompt: 50, completion: 5 } } },
      { reply: { kind: "error", status: 500 } },
    ]);
    const { llm } = createLlmForTest(ep, { NEO_MAIN_MODEL: model, NEO_MODEL_PRICES: `${model}=2,8` });
    const req: CompletionRequest = {
      role: "main",
      system: "sys",
      messages: [{ role: "user", content: "hi" }],
      tags: { purpose: "turn", conversation, user },
    };
    await llm.complete(req);
    // A write-back call for the same user, in no conversation.
    await llm.complete({ ...req, tags: { purpose: "writeback", user } });
    await expect(
      llm.complete({ ...req, tags: { purpose: "compaction", conversation, user } }),
    ).rejects.toMatchObject({ code: "LLM_SERVER" });

    // Three calls timed, the failed one included, and counted as a failure by its code.
    expect(await value("neo_model_latency_seconds_count", { model })).toBe(3);
    expect(await value("neo_model_errors_total", { model, code: "LLM_SERVER" })).toBe(1);
    expect(await value("neo_model_tokens_total", { model, kind: "prompt" })).toBe(150);
    expect(await value("neo_model_tokens_total", { model, kind: "completion" })).toBe(25);
    expect(await value("neo_model_cost_usd_total", { model })).toBeCloseTo(
      (150 * 2 + 25 * 8) / 1_000_000,
      12,
    );
    // The ids of whom and where never reach /metrics, in any series.
    const text = await registry.metrics();
    expect(text).not.toContain(`U${id}`);
    expect(text).not.toContain(conversation);
    expect(text).not.toMatch(/\b(user|conversation|thread|channel)="/);
  });

  it("labels tokens with the model that answered after a cheap-model fallback", async () => {
    const id = randomUUID().slice(0, 8);
    const [main, cheap] = [`metrics-main-${id}`, `metrics-cheap-${id}`];
    ep = await startScriptedOpenAI([
      { reply: { kind: "error", status: 500 } },
      { reply: { text: "summary", usage: { prompt: 30, completion: 3 }, model: `${main}-2026-01-01` } },
    ]);
    const { llm, ledger } = createLlmForTest(ep, {
      NEO_MAIN_MODEL: main,
      NEO_CHEAP_MODEL: cheap,
      NEO_MODEL_PRICES: `${main}=1,1;${cheap}=1,1`,
    });
    await llm.complete({
      role: "cheap",
      system: "s",
      messages: [{ role: "user", content: "x" }],
      tags: { purpose: "compaction" },
    });
    expect(await value("neo_model_latency_seconds_count", { model: cheap })).toBe(1);
    expect(await value("neo_model_latency_seconds_count", { model: main })).toBe(1);
    // Accounted under the configured name (a dated snapshot name would have no price, and would
    // grow the label set), so the cost is known.
    expect(await value("neo_model_tokens_total", { model: main, kind: "prompt" })).toBe(30);
    expect(await samples("neo_model_tokens_total", { model: `${main}-2026-01-01` })).toEqual([]);
    expect(ledger.total().costUsd).toBeCloseTo(33 / 1_000_000, 12);
  });
});
