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

  it("names the bad field for every field, and keeps only the known ones", () => {
    const file = { id: "F1", name: "a.txt", type: "text/plain", size: 3, url: "https://x/a.txt" };
    const full: InboundMessage = {
      ...good,
      files: [{ ...file, refused: "not yours" }],
      place: { kind: "public", workspace: "T1", guessed: true },
      context: ["Bob: hi"],
      position: "1700000000.000100",
      through: "1700000000.000100",
      viewing: "#general",
    };
    expect(parseInbound({ ...full, extra: 1, speaker: { ...full.speaker, extra: 1 } })).toEqual(full);
    const cases: [string, unknown][] = [
      ["value", null],
      ["value", "text"],
      ["id", { ...good, id: 7 }],
      ["conversation", { ...good, conversation: undefined }],
      ["speaker", { ...good, speaker: "Ann" }],
      ["speaker.userKey", { ...good, speaker: { displayName: "Ann", userKey: "" } }],
      ["speaker.displayName", { ...good, speaker: { userKey: "slack:T1:U1" } }],
      ["text", { ...good, text: null }],
      ["shared", { ...good, shared: "yes" }],
      ["files", { ...good, files: {} }],
      ["files.0", { ...good, files: [3] }],
      ["files.0.id", { ...good, files: [{ ...file, id: "" }] }],
      ["files.0.name", { ...good, files: [{ ...file, name: 1 }] }],
      ["files.0.type", { ...good, files: [{ ...file, type: undefined }] }],
      ["files.0.size", { ...good, files: [{ ...file, size: -1 }] }],
      ["files.0.size", { ...good, files: [{ ...file, size: 1.5 }] }],
      ["files.1.url", { ...good, files: [file, { ...file, url: null }] }],
      ["files.0.refused", { ...good, files: [{ ...file, refused: true }] }],
      ["place", { ...good, place: undefined }],
      ["place.kind", { ...good, place: { kind: "channel", workspace: "T1" } }],
      ["place.workspace", { ...good, place: { kind: "dm", workspace: "" } }],
      ["place.guessed", { ...good, place: { kind: "dm", workspace: "T1", guessed: false } }],
      ["context", { ...good, context: "Bob: hi" }],
      ["context.1", { ...good, context: ["Bob: hi", 2] }],
      ["position", { ...good, position: "abc" }],
      ["through", { ...good, through: "1.2.3" }],
      ["viewing", { ...good, viewing: "x".repeat(201) }],
      ["receivedAt", { ...good, receivedAt: "1" }],
      ["receivedAt", { ...good, receivedAt: Number.NaN }],
    ];
    for (const [field, value] of cases) {
      expect(() => parseInbound(value), field).toThrow(InboundMessageError);
      expect(() => parseInbound(value), field).toThrow(new RegExp(`^inbound message: ${field}: `));
    }
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
