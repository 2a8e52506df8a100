import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  budgetPct,
  messagesTokens,
  messageTokens,
  PER_MESSAGE_OVERHEAD,
  requestTokens,
} from "../../src/core/budget/budget.js";
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

  it("estimates a system block resumed from an earlier one's shared text exactly as from its start", () => {
    // Blocks that share a head and differ after it, at every kind of character: a change right after
    // a resume point must not leave a run before it counted as it was in the earlier block.
    const base = tokenCorpus()
      .map((s) => s.text)
      .join("\n\n");
    const inserts = ["x", "7", "Q", " ", "  ", "\n", ".", "é", "a1b2c3d4e5", "-", "{", "😀"];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 400; round++) {
      const at = next(base.length);
      const cut = next(3) === 0 ? next(40) : 0;
      const text = base.slice(0, at) + inserts[next(inserts.length)]! + base.slice(at + cut);
      const system = next(5) === 0 ? text.slice(0, at + 1) : text;
      expect(
        requestTokens({ system, messages: [], tools: [] }) - PER_MESSAGE_OVERHEAD,
        `round ${round}`,
      ).toBe(estimateTokens(system));
    }
    // Letters after digits: the run is priced as one mixed run only once it is long enough, so a
    // change just past a resume point may re-price the run before it.
    const ids = "see 12ab ".repeat(300);
    for (let at = 6; at < ids.length; at += 9) {
      requestTokens({ system: `${ids}#${at}`, messages: [], tools: [] });
      const system = `${ids.slice(0, at + 2)}cd34${ids.slice(at + 2)}#${at}`;
      expect(requestTokens({ system, messages: [], tools: [] }) - PER_MESSAGE_OVERHEAD, `at ${at}`).toBe(
        estimateTokens(system),
      );
    }
  });

  it("sums a growing (or replaced-at-the-end) message array as from its start", () => {
    const fresh = (ms: readonly Message[]) => ms.reduce((n, m) => n + messageTokens(m), 0);
    const working: Message[] = [];
    for (let i = 0; i < 30; i++) {
      working.push({ role: i % 2 ? "assistant" : "user", content: `message ${i} ${"word ".repeat(i)}` });
      expect(messagesTokens(working), `after ${i + 1}`).toBe(fresh(working));
    }
    // The last counted message replaced, and the array shortened then grown past its old length.
    working[working.length - 1] = { role: "assistant", content: "a much longer replacement ".repeat(9) };
    expect(messagesTokens(working)).toBe(fresh(working));
    working.splice(10);
    expect(messagesTokens(working)).toBe(fresh(working));
    for (let i = 0; i < 25; i++) working.push({ role: "user", content: `again ${i}` });
    expect(messagesTokens(working)).toBe(fresh(working));
    expect(messagesTokens([])).toBe(0);
  });
});
