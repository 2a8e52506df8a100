import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { contextMessage } from "../../src/core/agent/user-message.js";
import { InboundMessageError, parseInbound, toTurnInput } from "../../src/core/conversations/inbound.js";
import { conversationLimits } from "../../src/core/conversations/limits.js";
import type { InboundMessage } from "../../src/core/conversations/types.js";

const good: InboundMessage = {
  id: "1700000000.000100",
  conversation: "slack:T1:C1:1700000000.000100",
  speaker: { userKey: "slack:T1:U1", displayName: "Ann" },
  text: "what did Bob say?",
  shared: true,
  place: { kind: "public", workspace: "T1" },
  receivedAt: 1,
};

describe("inbound messages", () => {
  it("rejects a malformed message with an error naming the field", () => {
    expect(() => parseInbound({ ...good, conversation: "slack:T1" })).toThrow(InboundMessageError);
    expect(() => parseInbound({ ...good, conversation: "slack:T1" })).toThrow(
      /conversation: expected platform/,
    );
    expect(() => parseInbound({ ...good, id: "" })).toThrow(/^inbound message: id:/);
    expect(parseInbound(good)).toEqual(good);
  });

  it("keeps earlier thread messages apart from the person's own text, set apart for the model", () => {
    expect(toTurnInput(good)).toEqual({ text: "what did Bob say?", speaker: good.speaker });
    const withContext = toTurnInput({ ...good, context: ["Bob: deploy at 5", "Cy: ok"] });
    expect(withContext).toEqual({
      text: "what did Bob say?",
      speaker: good.speaker,
      context: ["Bob: deploy at 5", "Cy: ok"],
    });
    expect(contextMessage(withContext.context!)).toBe(
      "[Earlier messages in this thread, for context]\nBob: deploy at 5\nCy: ok\n[End of context]",
    );
  });
});

describe("conversationLimits", () => {
  it("maps the environment, with the seed's 16 recalled turns by default", () => {
    expect(conversationLimits(loadConfig({ NEO_MAX_CONCURRENT_TURNS: "3", NEO_LEASE_MS: "9000" }))).toEqual({
      maxConcurrentTurns: 3,
      userTurns: { perMinute: 20, burst: 10 },
      recallTurns: 16,
      idleEvictMs: 600_000,
      retentionMs: 30 * 86_400_000,
      leaseMs: 9000,
      dedupeTtlMs: 86_400_000,
      sweepMs: 9000,
    });
  });
});
