import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

describe("config", () => {
  it("uses the seed numbers as defaults", () => {
    const c = loadConfig({});
    expect([c.NEO_SOFT_PCT, c.NEO_HARD_PCT, c.NEO_REFAULT_EVERY]).toEqual([80, 92, 6]);
    expect([c.NEO_MAX_RETRIES_PER_TOOL, c.NEO_MAX_ADAPT_ATTEMPTS, c.NEO_RECALL_TURNS]).toEqual([3, 2, 16]);
    expect(c.NEO_APPROVAL_TTL_SECONDS).toBe(600);
  });

  it("names the variable and what it expects in one line", () => {
    expect(() => loadConfig({ NEO_CONTEXT_WINDOW: "lots" })).toThrow(ConfigError);
    try {
      loadConfig({ REDIS_URL: "not a url" });
    } catch (e) {
      expect((e as Error).message).toMatch(/^REDIS_URL: .*not a url/);
      expect((e as Error).message).not.toContain("\n");
    }
    expect(() => loadConfig({ NEO_SOFT_PCT: "95" })).toThrow(/^NEO_SOFT_PCT: must be below NEO_HARD_PCT/);
  });

  it("never echoes a secret value", () => {
    expect(() => loadConfig({ OPENAI_BASE_URL: "x", OPENAI_API_KEY: "sk-verysecret" })).toThrow(
      /^OPENAI_BASE_URL/,
    );
  });

  it("treats empty values as unset and splits admin ids", () => {
    const c = loadConfig({ REDIS_URL: "", NEO_ADMIN_USER_IDS: "U1, slack:T1:U2 ," });
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.NEO_ADMIN_USER_IDS).toEqual(["U1", "slack:T1:U2"]);
  });
});
