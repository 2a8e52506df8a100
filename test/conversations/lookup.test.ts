import { describe, expect, it } from "vitest";
import type { LogEntry } from "../../src/core/conversations/log-entry.js";
import { LOOKUP_MAX_HITS, lookupInLog } from "../../src/core/conversations/lookup.js";
import { resetSummary } from "../../src/core/conversations/replay.js";
import type { Message } from "../../src/core/llm/types.js";

const at = Date.UTC(2026, 10, 24, 9, 30);
const msg = (message: Message, minute = 0): LogEntry => ({
  type: "message",
  message,
  at: at + minute * 60_000,
});
const TX = "0x7f3a9c2e1b0d4f6a8c5e3b1d9f7a2c4e6b8d0f1a3c5e7b9d2f4a6c8e0b1d3f5a";

describe("conversation_lookup over a conversation's log", () => {
  it("finds an identifier in a tool result, newest first, with when and where", () => {
    const log: LogEntry[] = [
      msg({ role: "user", content: "pay Bob" }),
      msg({
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "pay", arguments: "{}" } }],
      }),
      msg({ role: "tool", tool_call_id: "c1", content: `submitted ${TX} to the chain` }, 1),
      {
        type: "compaction",
        summary: "[compaction 1: soft]\nGOAL: pay",
        kept: [],
        reason: "soft",
        at: at + 120_000,
      },
      msg({ role: "user", content: `is ${TX.toUpperCase()} final?` }, 3),
    ];
    expect(lookupInLog(log, TX)).toBe(
      [
        "2 matches in this conversation's history (newest first):",
        `- [2026-11-24 09:33 user] is ${TX.toUpperCase()} final?`,
        `- [2026-11-24 09:31 tool result] submitted ${TX} to the chain`,
      ].join("\n"),
    );
  });

  it("falls back to every word, ignores its own earlier lookups, and says when nothing matches", () => {
    const log: LogEntry[] = [
      msg({ role: "user", content: "the invoice for the Oslo office is INV-2291" }),
      msg({
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "l1",
            type: "function",
            function: { name: "conversation_lookup", arguments: '{"query":"oslo invoice"}' },
          },
        ],
      }),
      msg({
        role: "tool",
        tool_call_id: "l1",
        content: "1 match: the invoice for the Oslo office is INV-2291",
      }),
    ];
    expect(lookupInLog(log, "oslo invoice")).toMatch(
      /^1 match in this conversation's history[^\n]*\n- \[[^\]]+ user\] the invoice/,
    );
    expect(lookupInLog(log, "Bergen")).toBe(`Nothing in this conversation's history matches "Bergen".`);
    expect(lookupInLog(log, "  ")).toBe("Give an identifier or a few words to look for.");
  });

  it("does not reach before the last reset, and caps what it shows", () => {
    const old = msg({ role: "user", content: `before the reset: ${TX}` });
    const reset: LogEntry = { type: "trim", drop: 1, summary: resetSummary(null), at };
    const many = Array.from({ length: LOOKUP_MAX_HITS + 3 }, (_, i) =>
      msg({ role: "user", content: `order ORD-${i} shipped` }, i),
    );
    expect(lookupInLog([old, reset], TX)).toMatch(/^Nothing in this conversation's history matches/);
    const out = lookupInLog([old, reset, ...many], "shipped");
    expect(out.split("\n").filter((l) => l.startsWith("- "))).toHaveLength(LOOKUP_MAX_HITS);
    expect(out).toContain(`ORD-${LOOKUP_MAX_HITS + 2} shipped`);
    expect(out.endsWith("(3 more not shown: look for something more specific.)")).toBe(true);
  });
});
