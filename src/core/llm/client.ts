/**
 * The two-model client over the official `openai` SDK, against any OpenAI-compatible endpoint.
 *
 * Retries: the SDK is the one retry layer for model calls. It retries 408/409/429/5xx and
 * connection errors `NEO_LLM_MAX_RETRIES` times (default 2) with its backoff, honouring
 * `Retry-After`; nothing here or in the loop retries on top, so attempts never multiply. A `cheap`
 * call makes ONE attempt on the cheap model (maxRetries 0), and on any failure other than
 * cancellation goes to the main model with the SDK's normal retries: at most 1 + (1 + retries)
 * requests per cheap call.
 *
 * Budget: with a `gate`, every `purpose: turn` call made for a user asks it first; a refusal throws
 * `BudgetExceededError` and no request is made. Metrics (latency, tokens by model/user/conversation)
 * are recorded here, next to the ledger, so every model call is counted once.
 */
import { randomUUID } from "node:crypto";
import OpenAI from "openai";
import type { ChatCompletion } from "openai/resources/chat/completions";
import type { Config } from "../../config.js";
import { log } from "../log.js";
import { BudgetExceededError, LlmError, toLlmError } from "./errors.js";
import { countModelUsage, timeModelCall } from "./metrics.js";
import { requestHeaders } from "./request-headers.js";
import type { Completion, CompletionRequest, FinishReason, LlmClient, ToolCall, TurnGate } from "./types.js";
import type { UsageLedger } from "./usage-ledger.js";
import { requestMessages } from "./wire.js";

export type LlmSettings = Pick<
  Config,
  | "OPENAI_API_KEY"
  | "OPENAI_BASE_URL"
  | "NEO_MAIN_MODEL"
  | "NEO_CHEAP_MODEL"
  | "NEO_LLM_MAX_RETRIES"
  | "NEO_LLM_TIMEOUT_MS"
>;

export function mapFinishReason(raw: string | null | undefined): FinishReason {
  switch (raw) {
    case "stop":
    case "length":
    case "content_filter":
      return raw;
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    default:
      return "other";
  }
}

function toCompletion(res: ChatCompletion, model: string): Completion {
  const choice = res.choices?.[0];
  if (!choice?.message) throw new LlmError("LLM_BAD_RESPONSE", `model ${model}: answer has no choices`);
  const toolCalls: ToolCall[] = [];
  for (const c of choice.message.tool_calls ?? []) {
    if (c.type !== "function") continue;
    // Some local servers send empty ids; a result can only be paired with a call by its id.
    const id = c.id || `call_${randomUUID()}`;
    toolCalls.push({
      id,
      type: "function",
      function: { name: c.function.name, arguments: c.function.arguments },
    });
  }
  return {
    content: choice.message.content ?? null,
    toolCalls,
    finishReason: mapFinishReason(choice.finish_reason),
    usage: {
      promptTokens: res.usage?.prompt_tokens ?? 0,
      completionTokens: res.usage?.completion_tokens ?? 0,
    },
    model: res.model || model,
  };
}

export interface LlmClientOptions {
  /** Per-user daily budget, asked before each `turn` call (`createUsageTracker(...).gate`). */
  gate?: TurnGate | undefined;
}

/** Build the client. `ledger` records every successful call's usage and cost. */
export function createLlmClient(
  cfg: LlmSettings,
  ledger: UsageLedger,
  opts: LlmClientOptions = {},
): LlmClient {
  const { gate } = opts;
  const sdk = new OpenAI({
    // The SDK insists on a key; local servers (Ollama, vLLM) accept any, so a placeholder is honest.
    apiKey: cfg.OPENAI_API_KEY ?? "no-key",
    baseURL: cfg.OPENAI_BASE_URL,
    maxRetries: cfg.NEO_LLM_MAX_RETRIES,
    timeout: cfg.NEO_LLM_TIMEOUT_MS,
  });
  const cheapModel = cfg.NEO_CHEAP_MODEL;

  const call = async (model: string, req: CompletionRequest, maxRetries: number): Promise<Completion> => {
    const messages = requestMessages(req.system, req.messages);
    // The SDK adds an abort listener to the signal it gets and never removes it; a long turn would
    // pile one per request onto the turn's signal. Each request gets its own child signal instead.
    const child = new AbortController();
    const forward = () => child.abort(req.signal?.reason);
    if (req.signal?.aborted) child.abort(req.signal.reason);
    req.signal?.addEventListener("abort", forward, { once: true });
    try {
      const res = await timeModelCall(model, () =>
        sdk.chat.completions.create(
          {
            model,
            messages,
            ...(req.tools?.length ? { tools: req.tools } : {}),
            ...(req.maxTokens ? { max_completion_tokens: req.maxTokens } : {}),
            ...(req.json ? { response_format: { type: "json_object" as const } } : {}),
          },
          { signal: child.signal, maxRetries, headers: requestHeaders(req.tags) },
        ),
      );
      const completion = toCompletion(res, model);
      // Accounted under the model asked for (after any fallback, that is main): it is the name
      // prices are configured under, and it keeps metric labels to the two configured models.
      countModelUsage(ledger.record(model, req.tags, completion.usage));
      return completion;
    } catch (e) {
      throw toLlmError(e, model);
    } finally {
      req.signal?.removeEventListener("abort", forward);
    }
  };

  return {
    async complete(req) {
      if (gate && req.tags.purpose === "turn" && req.tags.user) {
        const refusal = await gate.admit(req.tags.user);
        if (refusal) throw new BudgetExceededError(refusal);
      }
      if (req.role === "main" || !cheapModel) return call(cfg.NEO_MAIN_MODEL, req, cfg.NEO_LLM_MAX_RETRIES);
      try {
        return await call(cheapModel, req, 0);
      } catch (e) {
        const err = e as LlmError;
        if (err.code === "LLM_ABORTED") throw err;
        log.warn(
          { code: err.code, model: cheapModel, purpose: req.tags.purpose },
          "cheap model failed; using main",
        );
        return call(cfg.NEO_MAIN_MODEL, req, cfg.NEO_LLM_MAX_RETRIES);
      }
    },
  };
}
