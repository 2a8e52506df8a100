/**
 * Thread positions (Slack ts, Discord snowflakes) order numerically, and the earlier messages Neo
 * reads on joining a thread are bounded by count and tokens, newest kept.
 */
import { describe, expect, it } from "vitest";
import {
  boundEarlier,
  comparePositions,
  EARLIER_MESSAGES,
  EARLIER_TOKENS,
} from "../../src/core/conversations/index.js";

describe("thread positions", () => {
  it("orders Slack ts and Discord snowflakes as numbers, not strings", () => {
    expect(comparePositions("1700000000.000100", "1700000000.000099")).toBe(1);
    expect(comparePositions("1700000000.5", "1700000000.000600")).toBe(1);
    expect(comparePositions("999999999.999999", "1000000000.000001")).toBe(-1);
    // A snowflake one digit longer is later, though "9…" > "1…" as strings.
    expect(comparePositions("99999999999999999", "100000000000000000")).toBe(-1);
    expect(comparePositions("1700000000.000100", "1700000000.0001")).toBe(0);
  });

  it("keeps the newest earlier messages within the count and token bounds", () => {
    const many = Array.from({ length: 50 }, (_, i) => `Ann: message ${i}`);
    const kept = boundEarlier(many);
    expect(kept).toHaveLength(EARLIER_MESSAGES);
    expect(kept.at(-1)).toBe("Ann: message 49");
    expect(kept[0]).toBe(`Ann: message ${50 - EARLIER_MESSAGES}`);
    // Long messages: the token budget stops first, still newest kept, never cut mid-message.
    const long = Array.from({ length: 10 }, (_, i) => `Bob ${i}: ${"word ".repeat(EARLIER_TOKENS / 4)}`);
    const fit = boundEarlier(long);
    expect(fit.length).toBeGreaterThan(0);
    expect(fit.length).toBeLessThan(10);
    expect(fit.at(-1)).toBe(long[9]);
  });
});
