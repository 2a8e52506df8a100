/**
 * A streamed answer assembled into the completion the endpoint would have sent unstreamed: text
 * pieces joined, each tool call's id/name/type taken from its first delta and its arguments joined in
 * order (by `index`, as OpenAI numbers them), the finish reason and usage from their chunks. Pure;
 * the client feeds it one chunk at a time. Tolerant of what OpenAI-compatible servers leave out (a
 * role delta, a tool call's `type`), strict about what an answer cannot lack (a finish reason).
 */
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";

interface CallParts {
  id: string;
  name: string;
  arguments: string;
}

export interface Assembly {
  id: string;
  model: string;
  created: number;
  content: string;
  /** Whether any text arrived (an answer of tool calls only has `content: null`). */
  hasContent: boolean;
  calls: CallParts[];
  finishReason: string | null;
  usage: ChatCompletion["usage"] | undefined;
}

export function newAssembly(): Assembly {
  return {
    id: "",
    model: "",
    created: 0,
    content: "",
    hasContent: false,
    calls: [],
    finishReason: null,
    usage: undefined,
  };
}

/** Add one chunk; returns the text it carried ("" for none). */
export function addChunk(a: Assembly, chunk: ChatCompletionChunk): string {
  a.id ||= chunk.id ?? "";
  a.model ||= chunk.model ?? "";
  a.created ||= chunk.created ?? 0;
  if (chunk.usage) a.usage = chunk.usage;
  let text = "";
  for (const choice of chunk.choices ?? []) {
    if (choice.index !== 0) continue;
    const delta = choice.delta ?? {};
    if (typeof delta.content === "string" && delta.content.length > 0) {
      a.content += delta.content;
      a.hasContent = true;
      text += delta.content;
    }
    for (const d of delta.tool_calls ?? []) {
      a.calls[d.index] ??= { id: "", name: "", arguments: "" };
      const call = a.calls[d.index]!;
      if (d.id) call.id = d.id;
      if (d.function?.name) call.name = d.function.name;
      if (d.function?.arguments) call.arguments += d.function.arguments;
    }
    if (choice.finish_reason) a.finishReason = choice.finish_reason;
  }
  return text;
}

/** The unstreamed shape of a finished assembly (null when the stream ended before its finish reason). */
export function toChatCompletion(a: Assembly, model: string): ChatCompletion | null {
  if (!a.finishReason) return null;
  const calls = a.calls.filter((c) => c !== undefined);
  return {
    id: a.id,
    object: "chat.completion",
    created: a.created,
    model: a.model || model,
    choices: [
      {
        index: 0,
        logprobs: null,
        finish_reason: a.finishReason as ChatCompletion.Choice["finish_reason"],
        message: {
          role: "assistant",
          content: a.hasContent ? a.content : null,
          refusal: null,
          ...(calls.length
            ? {
                tool_calls: calls.map((c) => ({
                  id: c.id,
                  type: "function" as const,
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
            : {}),
        },
      },
    ],
    ...(a.usage ? { usage: a.usage } : {}),
  };
}
