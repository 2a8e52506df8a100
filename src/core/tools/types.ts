/**
 * The loop's one interface to tools. The MCP-backed surface implements it; tests may implement it
 * with real MCP servers only (never mocks of our own modules).
 */
import type { ApprovalChannel } from "../approvals/types.js";
import type { ConversationKey, Speaker } from "../keys.js";
import type { ToolSchema } from "../llm/types.js";
import type { Place } from "../place.js";
import type { OutboundFile, Reporter } from "../reporter.js";
import type { FormChannel } from "./elicitation.js";

/** What a tool call returns to the model. `isError` = in-band failure the model should adapt to. */
export interface ToolResult {
  content: string;
  isError: boolean;
  /** Images and binary resources the tool returned, for the user (uploaded to the thread). */
  files?: OutboundFile[];
}

/**
 * One model response's batch of tool calls. Rules that hold per step (at most one approval prompt)
 * key on the object's identity: every call of the batch shares the same one.
 */
export interface ToolStep {
  readonly callIds: readonly string[];
}

/** Everything a dispatch may need about the turn that made the call. */
export interface ToolCallContext {
  conversation: ConversationKey;
  speaker: Speaker;
  /** Where the turn runs (see `TurnContext.place`). */
  place: Place;
  reporter: Reporter;
  approvals: ApprovalChannel;
  signal: AbortSignal;
  /** Where a server's questions (`elicitation/create`) are shown to the requester; absent: none can be. */
  forms?: FormChannel;
  /** The batch this call came in. */
  step: ToolStep;
}

export interface ToolSurface {
  /**
   * Natural tools sorted by name, then `core_execute`, then `memory_recall` when memory is wired,
   * then `conversation_lookup` when the conversation log is.
   */
  schemas(): ToolSchema[];
  /**
   * Run one call. Resolves with in-band results (including unknown/escalate refusals);
   * rejects with `ToolTransportError` only for transport/invocation failure (retry rung).
   */
  dispatch(name: string, args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolResult>;
}

/** Transport or invocation failure: the loop retries these with backoff (ladder rung 1). */
export class ToolTransportError extends Error {
  readonly code = "TOOL_TRANSPORT";
  constructor(
    message: string,
    readonly tool: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ToolTransportError";
  }
}

export const CORE_EXECUTE_TOOL = "core_execute";
export const MEMORY_RECALL_TOOL = "memory_recall";
export const CONVERSATION_LOOKUP_TOOL = "conversation_lookup";
