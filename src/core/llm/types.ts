/**
 * The model-facing contract. Messages are kept in the OpenAI chat shape so the transcript can be
 * sent as is; the system block is never part of the transcript (it is rebuilt every request).
 */
import type { FileRef } from "../files/types.js";
import type { ConversationKey, Speaker, UserKey } from "../keys.js";

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface UserMessage {
  role: "user";
  /** The text, with a line naming each attached file (and the text read from text-like files). */
  content: string;
  /** The message's files, by reference: never their bytes (images are kept apart, for their turn). */
  files?: FileRef[];
  /**
   * Who said it, kept with the transcript so later readers (write-back, recall) can tell whose words
   * a message holds. Absent when no one person said it: the loop's own notes (nudges) and earlier
   * thread messages brought along as context; write-back and recall take none of those. Never sent:
   * the request builder sends role and content only (`wire.ts`).
   */
  speaker?: Speaker;
}

export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: ToolCall[];
}

export interface ToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

/** One message of a working transcript. */
export type Message = UserMessage | AssistantMessage | ToolMessage;

/** A function advertised to the model (OpenAI `tools[]` entry). */
export interface ToolSchema {
  type: "function";
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

/** Which of the two models a call is for. `cheap` falls back to `main` when unset or failing. */
export type ModelRole = "main" | "cheap";

/** Why a call was made; usage is accounted by purpose, conversation and user. */
export type CallPurpose = "turn" | "compaction" | "writeback" | "plan";

export interface UsageTags {
  purpose: CallPurpose;
  conversation?: ConversationKey;
  user?: UserKey;
}

/**
 * Receives the text of a streamed answer as the model writes it. Called synchronously from the
 * stream's reader, so it must return at once (adapters schedule their platform calls).
 */
export interface TextSink {
  /** The next piece of the answer's text, in order. */
  text(delta: string): void;
  /**
   * The stream broke and the same request is being made again: the text received so far is void,
   * and the retry's text starts from the beginning.
   */
  restart(): void;
}

export interface CompletionRequest {
  role: ModelRole;
  /** A `main` call's model instead of `NEO_MAIN_MODEL` (a channel's `/neo channel model`). */
  model?: string;
  /** The system text sent first: the same for every request of a window (prompt caches reuse it). */
  system: string;
  messages: Message[];
  /**
   * System text sent after the transcript: what changes from request to request (the turn's pinned
   * block, retrieved memory, the budget stat), kept out of the prefix so the request up to it extends
   * the previous one of the thread.
   */
  context?: string;
  tools?: ToolSchema[];
  /**
   * Images still kept for this request (sha256 → data URL): a user message whose attached image is
   * here is sent with it as an image part; one whose image was released is sent as its text alone.
   */
  images?: ReadonlyMap<string, string>;
  /** Cancels the in-flight HTTP request too. */
  signal?: AbortSignal;
  maxTokens?: number;
  /** Ask for a JSON object (`response_format: json_object`) where the endpoint supports it. */
  json?: boolean;
  /** Where the answer's text goes while it streams (every call streams; most need no sink). */
  onText?: TextSink;
  tags: UsageTags;
}

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "other";

export interface TokenUsage {
  /** Every input token of the request, cached ones included (OpenAI's `prompt_tokens`). */
  promptTokens: number;
  completionTokens: number;
  /**
   * Of `promptTokens`, those the provider read from its prompt cache
   * (`prompt_tokens_details.cached_tokens`), billed at the cached rate. Absent when not reported.
   */
  cachedPromptTokens?: number;
}

export interface Completion {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: TokenUsage;
  /** The model that actually answered (after any cheap → main fallback). */
  model: string;
}

/** Two-model client. Throws `LlmError` when the endpoint fails after the SDK's own retries. */
export interface LlmClient {
  complete(req: CompletionRequest): Promise<Completion>;
}
