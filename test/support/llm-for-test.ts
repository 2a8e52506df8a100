/**
 * The real Neo client (real openai SDK) pointed at a scripted endpoint. SDK retries default to 0
 * here so a scripted HTTP error is seen once unless a test asks for retries.
 */
import { loadConfig } from "../../src/config.js";
import { createLlmClient } from "../../src/core/llm/client.js";
import type { LlmClient } from "../../src/core/llm/types.js";
import { createUsageLedger, pricesFromConfig, type UsageLedger } from "../../src/core/llm/usage-ledger.js";
import {
  createUsageTracker,
  type UsageTracker,
  type UsageTrackerOptions,
} from "../../src/core/usage/index.js";
import type { ScriptedOpenAI } from "./scripted-openai.js";

export interface LlmForTest {
  llm: LlmClient;
  ledger: UsageLedger;
  /** Present when `usage` options were given: the tracker counting the ledger's calls in the store. */
  usage?: UsageTracker;
}

/**
 * `env` overrides any variable (e.g. `{ NEO_CHEAP_MODEL: "mini", NEO_LLM_MAX_RETRIES: "2" }`);
 * `usage` builds a usage tracker over the ledger (its `budget` goes to the loop's deps).
 */
export function createLlmForTest(
  endpoint: Pick<ScriptedOpenAI, "url">,
  env: Record<string, string> = {},
  usage?: Omit<UsageTrackerOptions, "ledger">,
): LlmForTest {
  const cfg = loadConfig({
    OPENAI_BASE_URL: endpoint.url,
    OPENAI_API_KEY: "sk-test",
    NEO_MAIN_MODEL: "main-model",
    NEO_LLM_MAX_RETRIES: "0",
    ...env,
  });
  const ledger = createUsageLedger(pricesFromConfig(cfg));
  if (!usage) return { llm: createLlmClient(cfg, ledger), ledger };
  const tracker = createUsageTracker({ ...usage, ledger });
  return {
    llm: createLlmClient(cfg, ledger),
    ledger,
    usage: tracker,
  };
}
