/** The loop's limits from the validated environment. */
import type { Config } from "../../config.js";
import type { AgentLimits } from "./types.js";

export function limitsFromConfig(cfg: Config): AgentLimits {
  return {
    contextWindow: cfg.NEO_CONTEXT_WINDOW,
    softPct: cfg.NEO_SOFT_PCT,
    hardPct: cfg.NEO_HARD_PCT,
    stepBudget: cfg.NEO_STEP_BUDGET,
    noProgressStall: cfg.NEO_NO_PROGRESS_STALL,
    refaultEvery: cfg.NEO_REFAULT_EVERY,
    maxRetriesPerTool: cfg.NEO_MAX_RETRIES_PER_TOOL,
    maxAdaptAttempts: cfg.NEO_MAX_ADAPT_ATTEMPTS,
    maxOutputTokens: cfg.NEO_MAX_OUTPUT_TOKENS,
    summaryPct: cfg.NEO_SUMMARY_PCT,
    answerFile: { maxChars: cfg.NEO_ANSWER_FILE_CHARS, codeLines: cfg.NEO_ANSWER_FILE_CODE_LINES },
  };
}
