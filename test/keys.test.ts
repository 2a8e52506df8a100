import { describe, expect, it } from "vitest";
import { conversationKey, KeyError, parseConversationKey, parseUserKey, userKey } from "../src/core/keys.js";

describe("conversation and user keys", () => {
  it("round-trip parts that contain the separator", () => {
    const parts = { platform: "slack", workspace: "T1", channel: "C:9", thread: "1700000000.0001" } as const;
    const key = conversationKey(parts);
    expect(key.split(":")).toHaveLength(4);
    expect(parseConversationKey(key)).toEqual(parts);
    const u = { platform: "discord", workspace: "g%1", user: "u:2" } as const;
    expect(parseUserKey(userKey(u))).toEqual(u);
  });

  it("rejects malformed keys with a KeyError", () => {
    expect(() => parseConversationKey("slack:T1:C1")).toThrow(KeyError);
    expect(() => parseUserKey("irc:w:u")).toThrow(/unknown platform "irc"/);
  });
});
