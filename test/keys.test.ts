import { describe, expect, it } from "vitest";
import {
  conversationKey,
  hashTag,
  hashTagOf,
  KeyError,
  PARSED_KEYS_MAX,
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

describe("parsed keys", () => {
  it("are kept, frozen, and at most PARSED_KEYS_MAX of them: the oldest goes first", () => {
    const first = conversationKey({ platform: "slack", workspace: "TK", channel: "CK", thread: "1.1" });
    const parts = parseConversationKey(first);
    expect(parseConversationKey(first)).toBe(parts);
    expect(Object.isFrozen(parts)).toBe(true);
    const user = userKey({ platform: "slack", workspace: "TK", user: "UK" });
    expect(parseUserKey(user)).toBe(parseUserKey(user));
    // A key parsed as the other kind is still refused, cached or not.
    expect(() => parseUserKey(first)).toThrow(KeyError);
    expect(() => parseConversationKey(user)).toThrow(KeyError);
    for (let i = 0; i < PARSED_KEYS_MAX; i++) parseUserKey(`slack:TK:U${i}`);
    const again = parseConversationKey(first);
    expect(again).not.toBe(parts);
    expect(again).toEqual(parts);
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
