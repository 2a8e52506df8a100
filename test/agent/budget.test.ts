import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { budgetPct, PER_MESSAGE_OVERHEAD, requestTokens } from "../../src/core/budget/budget.js";
import { estimateTokens } from "../../src/core/budget/estimate.js";
import type { Message, ToolSchema } from "../../src/core/llm/types.js";
import { tokenCorpus } from "../support/token-corpus.js";

describe("token budget", () => {
  it("estimates within ±10% of the o200k tokenizer on prose, code and JSON tool results", () => {
    const rows = tokenCorpus().map((s) => {
      const real = encode(s.text).length;
      return { name: s.name, error: (estimateTokens(s.text) - real) / real };
    });
    for (const r of rows) expect(Math.abs(r.error), r.name).toBeLessThanOrEqual(0.1);
  });

  it("counts system + messages (+4 each, tool calls included) + tool schemas against the window", () => {
    const schema: ToolSchema = {
      type: "function",
      function: {
        name: "wallet__balance",
        description: "Balance of an address",
        parameters: { type: "object" },
      },
    };
    const messages: Message[] = [
      { role: "user", content: "balance of 0xabc?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "wallet__balance", arguments: '{"a":"0xabc"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "12.5" },
    ];
    const bare = requestTokens({ system: "sys", messages: [], tools: [] });
    const withMessages = requestTokens({ system: "sys", messages, tools: [] });
    const withTools = requestTokens({ system: "sys", messages, tools: [schema] });
    expect(withMessages - bare).toBeGreaterThanOrEqual(messages.length * PER_MESSAGE_OVERHEAD + 10);
    expect(withTools - withMessages).toBe(estimateTokens(JSON.stringify(schema)));
    expect(budgetPct({ system: "sys", messages, tools: [schema], contextWindow: withTools * 2 })).toBe(50);
  });
});
