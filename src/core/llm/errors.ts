/**
 * Model-call failures. The SDK has already retried what it retries (408/409/429/5xx, connection
 * errors) when one of these reaches the loop; the `code` says what to do next.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  PermissionDeniedError,
  RateLimitError,
} from "openai";

export type LlmErrorCode =
  | "LLM_ABORTED"
  | "LLM_TIMEOUT"
  | "LLM_CONNECTION"
  | "LLM_AUTH"
  | "LLM_RATE_LIMITED"
  | "LLM_BAD_REQUEST"
  /** The endpoint refused the request as longer than the model's context window. */
  | "LLM_CONTEXT_LENGTH"
  | "LLM_SERVER"
  | "LLM_BAD_RESPONSE"
  /** The answer's stream broke off mid-answer, again on every retry. */
  | "LLM_STREAM_BROKEN";

export class LlmError extends Error {
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    /** HTTP status when the endpoint answered. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "LlmError";
  }
}

/** Map whatever the SDK threw to one `LlmError`. */
export function toLlmError(e: unknown, model: string): LlmError {
  if (e instanceof LlmError) return e;
  const where = `model ${model}`;
  if (e instanceof APIUserAbortError) return new LlmError("LLM_ABORTED", `${where}: request cancelled`);
  if (e instanceof APIConnectionTimeoutError)
    return new LlmError("LLM_TIMEOUT", `${where}: request timed out`, undefined, { cause: e });
  if (e instanceof APIConnectionError)
    return new LlmError("LLM_CONNECTION", `${where}: cannot reach the endpoint (${e.message})`, undefined, {
      cause: e,
    });
  if (e instanceof AuthenticationError || e instanceof PermissionDeniedError)
    return new LlmError("LLM_AUTH", `${where}: endpoint refused the key; check OPENAI_API_KEY`, e.status, {
      cause: e,
    });
  if (e instanceof RateLimitError)
    return new LlmError("LLM_RATE_LIMITED", `${where}: rate limited (${e.message})`, 429, { cause: e });
  if (e instanceof APIError) {
    const status = e.status ?? 0;
    const code = status >= 500 ? "LLM_SERVER" : isContextLength(e) ? "LLM_CONTEXT_LENGTH" : "LLM_BAD_REQUEST";
    return new LlmError(code, `${where}: HTTP ${status}: ${e.message}`, status, { cause: e });
  }
  return new LlmError("LLM_BAD_RESPONSE", `${where}: ${(e as Error)?.message ?? String(e)}`, undefined, {
    cause: e,
  });
}

/**
 * OpenAI says `context_length_exceeded`; OpenAI-compatible servers (vLLM, Ollama, llama.cpp) only say
 * it in the message.
 */
function isContextLength(e: InstanceType<typeof APIError>): boolean {
  if (e.status !== 400 && e.status !== 413) return false;
  if (e.code === "context_length_exceeded") return true;
  return /maximum context length|context (length|window)|too many tokens|prompt is too long/i.test(e.message);
}
