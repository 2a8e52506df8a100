/**
 * True cost with prompt caching: the scripted endpoint reports `prompt_tokens_details.cached_tokens`
 * as OpenAI does, and the third price of `NEO_MODEL_PRICES` (`model=input,output,cached`) prices
 * those tokens. Prices here: $1 per million input, $1 output, $0.10 cached input; the user's daily
 * budget is $0.001 (1,000 tokens at the full rate).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createAgent } from "../../src/core/agent/agent.js";
import { registry } from "../../src/ops/metrics.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { ann, input, testContext, testDeps } from "../support/agent-kit.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI | undefined;
let store: Store | undefined;
afterEach(async () => {
  await ep?.close();
  await store?.close();
  ep = undefined;
  store = undefined;
});

const PRICES = { NEO_MODEL_PRICES: "main-model=1,1,0.1" };

/** The value of one series of a metric in this process's registry. */
async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const series = metric?.values.find((v) =>
    Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want),
  );
  return series?.value;
}

describe("cost with cached input tokens", () => {
  it("prices cached input at its own rate: budgets, /neo usage and /metrics agree", async () => {
    store = await createStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-cached-")), prefix: "neo:" });
    // 1,000 prompt tokens of which 900 cached, 0 completion: 100 × $1 + 900 × $0.10 = $0.00019 per
    // call. At the full input rate each call would be $0.001, the whole budget.
    const call = { text: "Done.", usage: { prompt: 1000, completion: 0, cached: 900 } };
    ep = await startScriptedOpenAI([
      { label: "first turn", reply: call },
      { label: "second turn", reply: call },
    ]);
    const deps = testDeps(ep, { env: PRICES, usage: { store, userDailyUsd: 0.001 } });
    const agent = createAgent(deps);

    const first = testContext();
    expect((await agent.chat(input("hi"), first)).status).toBe("answered");
    // Priced at the full rate, the first call alone would have used the day's budget and stopped
    // this turn before its request; at the cached rate it is 19 %, so no notice either.
    const second = testContext();
    expect((await agent.chat(input("and again"), second)).status).toBe("answered");
    expect(second.reporter.notices).toEqual([]);
    expect(ep.requests).toHaveLength(2);
    expect(ep.violations).toEqual([]);

    const report = await deps.usage!.report(ann.userKey);
    expect(report).toContain(
      "• Today (UTC): $0.00038 · 2,000 tokens · 2 model calls · 90 % of input from cache",
    );
    expect(report).toContain("• Daily budget: $0.0010, 38 % used today");
    expect(await deps.usage!.statusLines()).toContain("90 % of input from cache");

    expect(await metricValue("neo_model_prompt_cache_hit_ratio", { model: "main-model" })).toBeCloseTo(
      0.9,
      5,
    );
    expect(await metricValue("neo_model_tokens_total", { model: "main-model", kind: "cached" })).toBe(1800);
  });

  it("without a cached price, cached input costs the input price; a malformed entry is refused", async () => {
    ep = await startScriptedOpenAI([
      { reply: { text: "Ok.", usage: { prompt: 1000, completion: 0, cached: 900 } } },
    ]);
    const { llm, ledger } = createLlmForTest(ep, { NEO_MODEL_PRICES: "main-model=1,1" });
    let cost = -1;
    ledger.onRecord((e) => {
      cost = e.costUsd;
    });
    await llm.complete({
      role: "main",
      system: "s",
      messages: [{ role: "user", content: "x" }],
      tags: { purpose: "turn" },
    });
    expect(cost).toBeCloseTo(0.001, 12);

    expect(() => loadConfig({ OPENAI_API_KEY: "k", NEO_MODEL_PRICES: "m=1,1,0.1,5" })).toThrow(
      /NEO_MODEL_PRICES.*model=input,output\[,cached\]/,
    );
    expect(loadConfig({ OPENAI_API_KEY: "k", NEO_MODEL_PRICES: "m=1,2,0.25" }).NEO_MODEL_PRICES).toEqual({
      m: { input: 1, output: 2, cached: 0.25 },
    });
  });
});
