/**
 * The model-facing contract. Messages are kept in the OpenAI chat shape so the transcript can be
 * sent as is; the system block is never part of the transcript (it is rebuilt every request).
 */
import type { ConversationKey, UserKey } from "../keys.js";

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface UserMessage {
  role: "user";
  content: string;
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

export interface CompletionRequest {
  role: ModelRole;
  system: string;
  messages: Message[];
  tools?: ToolSchema[];
  /** Cancels the in-flight HTTP request too. */
  signal?: AbortSignal;
  maxTokens?: number;
  /** Ask for a JSON object (`response_format: json_object`) where the endpoint supports it. */
  json?: boolean;
  tags: UsageTags;
}

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "other";

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
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
