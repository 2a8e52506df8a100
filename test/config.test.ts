import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, writebackConcurrencyOf } from "../src/config.js";

describe("config", () => {
  it("uses the seed numbers as defaults", () => {
    const c = loadConfig({});
    expect([c.NEO_SOFT_PCT, c.NEO_HARD_PCT, c.NEO_REFAULT_EVERY]).toEqual([80, 92, 6]);
    expect([c.NEO_MAX_RETRIES_PER_TOOL, c.NEO_MAX_ADAPT_ATTEMPTS, c.NEO_RECALL_TURNS]).toEqual([3, 2, 16]);
    expect(c.NEO_APPROVAL_TTL_SECONDS).toBe(600);
  });

  it("runs as many write-back calls at once as turns, unless NEO_WRITEBACK_CONCURRENCY says otherwise", () => {
    expect(writebackConcurrencyOf(loadConfig({}))).toBe(8);
    expect(writebackConcurrencyOf(loadConfig({ NEO_MAX_CONCURRENT_TURNS: "200" }))).toBe(200);
    const set = loadConfig({ NEO_MAX_CONCURRENT_TURNS: "200", NEO_WRITEBACK_CONCURRENCY: "4" });
    expect(writebackConcurrencyOf(set)).toBe(4);
    expect(() => loadConfig({ NEO_WRITEBACK_CONCURRENCY: "0" })).toThrow(/^NEO_WRITEBACK_CONCURRENCY: /);
  });

  it("takes a Redis Cluster as REDIS_CLUSTER=true with comma-separated seed URLs, and only so", () => {
    const seeds = "redis://10.0.0.1:6379, redis://10.0.0.2:6379";
    expect(loadConfig({ REDIS_URL: seeds, REDIS_CLUSTER: "true" })).toMatchObject({
      REDIS_URL: seeds,
      REDIS_CLUSTER: true,
    });
    expect(loadConfig({ REDIS_URL: "redis://r:6379" }).REDIS_CLUSTER).toBe(false);
    expect(() => loadConfig({ REDIS_URL: seeds })).toThrow(
      /^REDIS_URL: several URLs .* set REDIS_CLUSTER=true$/,
    );
    expect(() => loadConfig({ REDIS_CLUSTER: "true" })).toThrow(/^REDIS_CLUSTER: set REDIS_URL/);
    expect(() => loadConfig({ REDIS_URL: "redis://a:1,nope", REDIS_CLUSTER: "true" })).toThrow(
      /^REDIS_URL: must be a URL/,
    );
  });

  it("names the variable and what it expects in one line", () => {
    expect(() => loadConfig({ NEO_CONTEXT_WINDOW: "lots" })).toThrow(ConfigError);
    expect(() => loadConfig({ NEO_MAX_CONCURRENT_TURNS: "none" })).toThrow(
      /^NEO_MAX_CONCURRENT_TURNS: .*got "none"/,
    );
    expect(() => loadConfig({ REDIS_URL: "not a url" })).toThrow(
      /^REDIS_URL: must be a URL \(with REDIS_CLUSTER=true, comma-separated URLs\) \(the value given\)$/,
    );
    expect(() => loadConfig({ NEO_SOFT_PCT: "95" })).toThrow(/^NEO_SOFT_PCT: must be below NEO_HARD_PCT/);
  });

  it("never echoes a secret value", () => {
    expect(() => loadConfig({ OPENAI_BASE_URL: "x", OPENAI_API_KEY: "sk-verysecret" })).toThrow(
      /^OPENAI_BASE_URL/,
    );
  });

  it("never echoes a URL, which may carry a password, even a malformed one", () => {
    for (const bad of [
      "redis://:hunter2-PW@127.0.0.1:99999",
      "redis//admin:hunter2-PW@cache",
      "rediss://u:hunter2-PW@ bad",
    ]) {
      let message = "";
      try {
        loadConfig({ REDIS_URL: bad });
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message, bad).toMatch(/^REDIS_URL: /);
      expect(message, bad).not.toContain("hunter2");
    }
  });

  it("keeps /metrics on loopback unless a bearer token guards it", () => {
    const c = loadConfig({});
    expect([c.NEO_METRICS_HOST, c.NEO_METRICS_PORT, c.NEO_METRICS_TOKEN]).toEqual([
      "127.0.0.1",
      undefined, // NEO_HTTP_PORT + 6464: src/app/process-place.ts
      undefined,
    ]);
    expect(() => loadConfig({ NEO_METRICS_HOST: "0.0.0.0" })).toThrow(/^NEO_METRICS_TOKEN: must be set/);
    expect(
      loadConfig({ NEO_METRICS_HOST: "0.0.0.0", NEO_METRICS_TOKEN: "a".repeat(24) }).NEO_METRICS_HOST,
    ).toBe("0.0.0.0");
    expect(loadConfig({ NEO_METRICS_HOST: "::1" }).NEO_METRICS_HOST).toBe("::1");
  });

  it("treats empty values as unset and splits admin ids", () => {
    const c = loadConfig({ REDIS_URL: "", NEO_ADMIN_USER_IDS: "U1, slack:T1:U2 ," });
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.NEO_ADMIN_USER_IDS).toEqual(["U1", "slack:T1:U2"]);
  });

  it("takes the Slack OAuth install as all three variables, without a bot token or Socket Mode", () => {
    const trio = {
      SLACK_CLIENT_ID: "1.2",
      SLACK_CLIENT_SECRET: "secret-abc",
      SLACK_STATE_SECRET: "state-abc",
    };
    expect(loadConfig(trio).SLACK_CLIENT_ID).toBe("1.2");
    expect(() => loadConfig({ SLACK_CLIENT_ID: "1.2" })).toThrow(
      /^SLACK_CLIENT_ID: the OAuth install needs all of/,
    );
    expect(() => loadConfig({ ...trio, SLACK_BOT_TOKEN: "xoxb-1" })).toThrow(/^SLACK_BOT_TOKEN: .*not both/);
    expect(() => loadConfig({ ...trio, SLACK_APP_TOKEN: "xapp-1" })).toThrow(/^SLACK_APP_TOKEN: /);
  });
});
