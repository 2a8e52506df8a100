/**
 * The two-model client over the official `openai` SDK, against any OpenAI-compatible endpoint.
 *
 * Every call streams (`stream: true`, usage asked for with `stream_options.include_usage`) and is
 * assembled into the completion the endpoint would have sent unstreamed (`assemble.ts`), so the loop,
 * the transcript and compaction see one shape; the text also goes to the request's `onText` sink as
 * it arrives.
 *
 * Retries: the SDK retries a refused request (408/409/429/5xx, connection errors)
 * `NEO_LLM_MAX_RETRIES` times (default 2) with its backoff, honouring `Retry-After`. A stream that
 * breaks off mid-answer is the one thing the SDK cannot retry (the response had begun): the client
 * asks again, up to the same number of times, telling the sink to start over. Nothing in the loop
 * retries on top, so attempts never multiply. A `cheap`
 * call makes ONE attempt on the cheap model (maxRetries 0), and on any failure other than
 * cancellation goes to the main model with the SDK's normal retries: at most 1 + (1 + retries)
 * requests per cheap call.
 *
 * Metrics (latency, tokens by model/user/conversation)
 * are recorded here, next to the ledger, so every model call is counted once.
 */
import { randomUUID } from "node:crypto";
import type { Attributes } from "@opentelemetry/api";
import OpenAI from "openai";
import type { ChatCompletion, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { Config } from "../../config.js";
import { requestFetch } from "../../ops/http-fetch.js";
import { inSpan, SpanKind, traceContent } from "../../ops/tracing/spans.js";
import { estimateTokens } from "../budget/estimate.js";
import { log } from "../log.js";
import { addChunk, newAssembly, toChatCompletion } from "./assemble.js";
import { endpointOf } from "./endpoint.js";
import { LlmError, toLlmError } from "./errors.js";
import { countModelError, countModelUsage, timeModelCall } from "./metrics.js";
import { requestHeaders } from "./request-headers.js";
import type { Completion, CompletionRequest, FinishReason, LlmClient, ToolCall } from "./types.js";
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

/** Usage as reported; estimated from the text when the endpoint sends none (it ignored `include_usage`). */
function usageOf(res: ChatCompletion, req: CompletionRequest): Completion["usage"] {
  if (res.usage) {
    const cached = res.usage.prompt_tokens_details?.cached_tokens;
    return {
      promptTokens: res.usage.prompt_tokens,
      completionTokens: res.usage.completion_tokens,
      // Capped by the prompt: a provider's odd report must not price more cached than sent.
      ...(cached ? { cachedPromptTokens: Math.min(cached, res.usage.prompt_tokens) } : {}),
    };
  }
  if (!usageWarned) {
    usageWarned = true;
    log.warn(
      { model: res.model },
      "the model endpoint reports no usage for streamed answers; token counts are estimated",
    );
  }
  const message = res.choices[0]?.message;
  const out = `${message?.content ?? ""}${JSON.stringify(message?.tool_calls ?? [])}`;
  return {
    promptTokens: estimateTokens(
      `${req.system}${JSON.stringify(req.messages)}${req.context ?? ""}${JSON.stringify(req.tools ?? [])}`,
    ),
    completionTokens: estimateTokens(out),
  };
}
let usageWarned = false;

function toCompletion(res: ChatCompletion, model: string, req: CompletionRequest): Completion {
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
    usage: usageOf(res, req),
    model: res.model || model,
  };
}

/** What a `chat` span says of the answer: model, finish reason, tokens (cached ones too). */
function completionAttributes(c: Completion): Attributes {
  return {
    "gen_ai.response.model": c.model,
    "gen_ai.response.finish_reasons": [c.finishReason],
    "gen_ai.usage.input_tokens": c.usage.promptTokens,
    "gen_ai.usage.output_tokens": c.usage.completionTokens,
    "gen_ai.usage.cache_read.input_tokens": c.usage.cachedPromptTokens ?? 0,
  };
}

/** The request's and the answer's text, for `NEO_TRACE_CONTENT=true` only. */
function contentAttributes(req: CompletionRequest, c: Completion): Attributes {
  return {
    "gen_ai.system_instructions": req.system,
    "gen_ai.input.messages": JSON.stringify(req.messages),
    "gen_ai.output.messages": JSON.stringify([
      { role: "assistant", content: c.content, tool_calls: c.toolCalls },
    ]),
  };
}

/** Build the client. `ledger` records every successful call's usage and cost. */
export function createLlmClient(cfg: LlmSettings, ledger: UsageLedger): LlmClient {
  const endpoint = endpointOf(cfg.OPENAI_BASE_URL);
  const sdk = new OpenAI({
    // The SDK insists on a key; local servers (Ollama, vLLM) accept any, so a placeholder is honest.
    apiKey: cfg.OPENAI_API_KEY ?? "no-key",
    baseURL: endpoint.baseURL,
    // Basic credentials from the URL replace the (placeholder) bearer key; config refuses both.
    defaultHeaders: endpoint.headers,
    maxRetries: cfg.NEO_LLM_MAX_RETRIES,
    timeout: cfg.NEO_LLM_TIMEOUT_MS,
    // undici's request API under the SDK, not node's fetch: ~0.4 ms of CPU less per call (http-fetch.ts).
    fetch: requestFetch(),
  });
  const cheapModel = cfg.NEO_CHEAP_MODEL;

  /**
   * One attempt: open the stream (the SDK retries a refused request itself, `maxRetries` times) and
   * read it to the end, handing text to the sink as it arrives. Resolves with the assembled
   * completion, or null when the stream ended or broke before its finish reason.
   */
  const attempt = async (
    model: string,
    req: CompletionRequest,
    messages: ChatCompletionMessageParam[],
    signal: AbortSignal,
    maxRetries: number,
  ): Promise<{ completion: ChatCompletion | null; broken?: unknown }> => {
    const stream = await sdk.chat.completions.create(
      {
        model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
        ...(req.tools?.length ? { tools: req.tools } : {}),
        ...(req.maxTokens ? { max_completion_tokens: req.maxTokens } : {}),
        ...(req.json ? { response_format: { type: "json_object" as const } } : {}),
      },
      { signal, maxRetries, headers: requestHeaders(req.tags) },
    );
    const assembly = newAssembly();
    try {
      for await (const chunk of stream) {
        const text = addChunk(assembly, chunk);
        if (text) req.onText?.text(text);
      }
    } catch (e) {
      if (signal.aborted) throw e;
      return { completion: null, broken: e };
    }
    return { completion: toChatCompletion(assembly, model) };
  };

  /** One model call in its `chat {model}` span (GenAI conventions; text only with NEO_TRACE_CONTENT). */
  const call = (model: string, req: CompletionRequest, maxRetries: number): Promise<Completion> =>
    inSpan(
      `chat ${model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": model,
          "neo.purpose": req.tags.purpose,
        },
      },
      async (span) => {
        const completion = await callModel(model, req, maxRetries);
        span.setAttributes(completionAttributes(completion));
        if (traceContent()) span.setAttributes(contentAttributes(req, completion));
        return completion;
      },
    );

  const callModel = async (
    model: string,
    req: CompletionRequest,
    maxRetries: number,
  ): Promise<Completion> => {
    const messages = requestMessages(req.system, req.messages, req.images, req.context);
    // The SDK adds an abort listener to the signal it gets and never removes it; a long turn would
    // pile one per request onto the turn's signal. Each request gets its own child signal instead.
    const child = new AbortController();
    const forward = () => child.abort(req.signal?.reason);
    if (req.signal?.aborted) child.abort(req.signal.reason);
    req.signal?.addEventListener("abort", forward, { once: true });
    try {
      const res = await timeModelCall(model, async () => {
        // A stream that breaks mid-answer is asked again, up to `maxRetries` times; the retries after
        // a break make one request each, so a call makes at most 1 + 2 x maxRetries requests.
        for (let broken = 0; ; broken++) {
          const out = await attempt(model, req, messages, child.signal, broken === 0 ? maxRetries : 0);
          if (out.completion) return out.completion;
          const why = out.broken instanceof Error ? out.broken.message : "it ended before its finish reason";
          if (broken >= maxRetries) {
            throw new LlmError(
              "LLM_STREAM_BROKEN",
              `model ${model}: the answer's stream broke off (${why}), ${broken + 1} time(s)`,
              undefined,
              { cause: out.broken },
            );
          }
          log.warn({ model, purpose: req.tags.purpose, err: why }, "model stream broke off; asking again");
          req.onText?.restart();
        }
      });
      const completion = toCompletion(res, model, req);
      // Accounted under the model asked for (after any fallback, that is main): it is the name
      // prices are configured under, and it keeps metric labels to the two configured models.
      countModelUsage(ledger.record(model, req.tags, completion.usage));
      return completion;
    } catch (e) {
      const err = toLlmError(e, model);
      if (err.code !== "LLM_ABORTED") countModelError(model, err.code);
      throw err;
    } finally {
      req.signal?.removeEventListener("abort", forward);
    }
  };

  return {
    async complete(req) {
      if (req.role === "main" || !cheapModel)
        return call((req.role === "main" && req.model) || cfg.NEO_MAIN_MODEL, req, cfg.NEO_LLM_MAX_RETRIES);
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
