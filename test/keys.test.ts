import { describe, expect, it } from "vitest";
import {
  conversationKey,
  hashTag,
  hashTagOf,
  KeyError,
  parseConversationKey,
  parseUserKey,
  userKey,
} from "../src/core/keys.js";

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

describe("hash tags", () => {
  it("wrap one id in braces, found again in a store key; ids with braces round-trip as keys without them", () => {
    const c = conversationKey({ platform: "console", workspace: "w{1}", channel: "c}", thread: "{t" });
    expect(c).not.toMatch(/[{}]/);
    expect(parseConversationKey(c)).toEqual({
      platform: "console",
      workspace: "w{1}",
      channel: "c}",
      thread: "{t",
    });
    expect(hashTagOf(`conv:log:${hashTag(c)}`)).toBe(c);
    expect(hashTagOf(`cortex:${hashTag("slack:T1:U1")}:records`)).toBe("slack:T1:U1");
    expect(hashTagOf("approvals:audit")).toBeUndefined();
  });

  it("refuse an id Redis would not hash whole (empty, or with braces)", () => {
    expect(() => hashTag("")).toThrow(KeyError);
    expect(() => hashTag("a}b")).toThrow(/cannot be a hash tag/);
  });
});
