/**
 * The synthetic tools: `core_execute` (the only road to Escalate actions), `memory_recall` (a
 * deliberate cortex lookup) and `conversation_lookup` (the conversation's whole history, where the
 * identifiers compaction moved out of the summary are found). Their arguments are validated with
 * zod; bad arguments are in-band.
 */
import { z } from "zod";
import type { ToolSchema } from "../llm/types.js";
import {
  CONVERSATION_LOOKUP_TOOL,
  CORE_EXECUTE_TOOL,
  MEMORY_RECALL_TOOL,
  type ToolCallContext,
  type ToolResult,
} from "./types.js";

/** A delegate behind a synthetic tool. Its result is shown to the model (cut like any result). */
export type SyntheticDelegate = (input: string, ctx: ToolCallContext) => Promise<ToolResult>;

export const coreExecuteArgs = z.object({
  intent: z.string().trim().min(1, "intent must be a non-empty description of the task"),
});

export const memoryRecallArgs = z.object({
  query: z.string().optional().default(""),
});

export const conversationLookupArgs = z.object({
  query: z.string().trim().min(1, "query must be an identifier or a few words to look for"),
});

export const coreExecuteSchema: ToolSchema = {
  type: "function",
  function: {
    name: CORE_EXECUTE_TOOL,
    description:
      "Delegate a money-moving or signature-needing task (send, transfer, swap, approve, deploy, stake, bridge, ...) " +
      "to the secure execution pipeline. The user is shown the exact plan and must approve it before anything runs; " +
      "you get back the verifiable outcome (results and transaction ids). Use this for every such action: those " +
      "tools cannot be called directly.",
    parameters: {
      type: "object",
      properties: {
        intent: {
          type: "string",
          description:
            "A clear, self-contained description of the task: what to do, exact amounts (as written by the user), " +
            "assets, recipients and any constraints.",
        },
      },
      required: ["intent"],
    },
  },
};

export const memoryRecallSchema: ToolSchema = {
  type: "function",
  function: {
    name: MEMORY_RECALL_TOOL,
    description:
      "Search your own durable memory of this user (facts, preferences, past outcomes). Use it when the user asks " +
      "what you remember or when earlier context would help.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "What to look for; empty returns a general digest." },
      },
    },
  },
};

export const conversationLookupSchema: ToolSchema = {
  type: "function",
  function: {
    name: CONVERSATION_LOOKUP_TOOL,
    description:
      "Search this conversation's complete history, including messages and tool results consolidated out of your " +
      "window and identifiers moved out of the summary. Use it to find an exact identifier (hash, address, id, URL, " +
      "e-mail, file name) or what was said about something. Returns matching excerpts, newest first.",
    parameters: {
      type: "object",
      properties: {
        query: {
          type: "string",
          description: "The identifier, or words that appear in the messages you need.",
        },
      },
      required: ["query"],
    },
  },
};

/** One line for a zod failure, for the model to correct its call. */
export function describeArgsError(tool: string, error: z.ZodError): string {
  const issue = error.issues[0]!;
  const field = issue.path.length ? issue.path.map(String).join(".") : "arguments";
  return `invalid arguments for ${tool}: ${field}: ${issue.message}`;
}
