import { describe, expect, it } from "vitest";
import type { LogEntry } from "../../src/core/conversations/log-entry.js";
import {
  answerSince,
  INTERRUPTED_TOOL_RESULT,
  progressOf,
  recallDrop,
  replay,
  tailOrphans,
  trimmedSummary,
} from "../../src/core/conversations/replay.js";
import type { Message } from "../../src/core/llm/types.js";

const at = 0;
const user = (content: string): Message => ({ role: "user", content });
const answer = (content: string): Message => ({ role: "assistant", content });
const calls = (...ids: string[]): Message => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "fs__read", arguments: "{}" } })),
});
const result = (id: string, content = "ok"): Message => ({ role: "tool", tool_call_id: id, content });
const msg = (message: Message): LogEntry => ({ type: "message", message, at });

describe("replay", () => {
  it("rebuilds the window after the last compaction marker: its kept messages, later ones, its summary", () => {
    const entries: LogEntry[] = [
      msg(user("one")),
      msg(answer("a1")),
      { type: "compaction", summary: "GOAL: x", kept: [user("two")], reason: "soft", at },
      msg(answer("a2")),
      { type: "turn-end", status: "answered", at },
    ];
    expect(replay(entries)).toEqual({ working: [user("two"), answer("a2")], summary: "GOAL: x" });
  });

  it("starts over at a reset and drops the trimmed head", () => {
    const entries: LogEntry[] = [
      msg(user("old")),
      { type: "reset", at },
      msg(user("a")),
      msg(answer("b")),
      msg(user("c")),
      { type: "trim", drop: 2, summary: trimmedSummary(null, 1), at },
    ];
    expect(replay(entries)).toEqual({ working: [user("c")], summary: trimmedSummary(null, 1) });
  });

  it("gives calls that never got a result a synthetic error result, right after their call", () => {
    const entries: LogEntry[] = [msg(user("go")), msg(calls("c1", "c2")), msg(result("c1"))];
    const { working } = replay(entries);
    expect(working).toEqual([
      user("go"),
      calls("c1", "c2"),
      result("c1"),
      { role: "tool", tool_call_id: "c2", content: INTERRUPTED_TOOL_RESULT },
    ]);
    expect(tailOrphans(entries)).toEqual([
      { role: "tool", tool_call_id: "c2", content: INTERRUPTED_TOOL_RESULT },
    ]);
    // Once persisted, replay finds them as real results and adds nothing.
    const repaired = [...entries, ...tailOrphans(entries).map(msg)];
    expect(replay(repaired).working).toEqual(working);
    expect(tailOrphans(repaired)).toEqual([]);
  });

  it("keeps the last N user turns, cutting only at a user message", () => {
    const w = [user("1"), calls("x"), result("x"), answer("a"), user("2"), answer("b"), user("3")];
    expect(recallDrop(w, 2)).toBe(4);
    expect(recallDrop(w, 3)).toBe(0);
    expect(recallDrop(w, 16)).toBe(0);
  });
});

describe("trimmedSummary", () => {
  it("carries the next compaction marker and keeps the previous summary's body", () => {
    expect(trimmedSummary("[compaction 2: soft]\nGOAL: ship", 16)).toBe("[compaction 3: recall]\nGOAL: ship");
    expect(trimmedSummary(null, 16)).toMatch(
      /^\[compaction 1: recall\]\nEarlier turns .* the last 16 are kept\.$/,
    );
  });
});

describe("progressOf", () => {
  it("counts taken inbox entries and finds a turn left open", () => {
    const entries: LogEntry[] = [
      { type: "turn-start", from: 0, id: "m0", at },
      msg(user("m0")),
      msg(answer("a")),
      { type: "turn-end", status: "answered", at },
      { type: "turn-start", from: 1, id: "m1", at },
      msg(user("m1")),
      { type: "taken", from: 2, count: 2, ids: ["m2", "m3"], at },
      msg(calls("c")),
    ];
    expect(progressOf(entries)).toEqual({ taken: 4, openTurn: { from: 1, id: "m1", logIndex: 4 } });
    expect(answerSince(entries, 4)).toBeUndefined();
    expect(answerSince([...entries, msg(result("c")), msg(answer("done"))], 4)).toBe("done");
    expect(progressOf([...entries, { type: "turn-end", status: "answered", at }]).openTurn).toBeNull();
  });
});
