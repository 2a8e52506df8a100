import { describe, expect, it } from "vitest";
import { createRateGate } from "../../src/adapters/slack/rate-gate.js";

const rateLimited = (retryAfter: number) =>
  Object.assign(new Error("ratelimited"), { code: "slack_webapi_rate_limited_error", retryAfter });

describe("rate gate", () => {
  it("runs calls of one key in order and never more than the rule allows in a window", async () => {
    const gate = createRateGate();
    const starts: Array<{ i: number; at: number }> = [];
    const rule = { limit: 2, windowMs: 60 };
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        gate.run({
          key: "k",
          rule,
          call: async () => {
            starts.push({ i, at: Date.now() });
          },
        }),
      ),
    );
    expect(starts.map((s) => s.i)).toEqual([0, 1, 2, 3, 4, 5]);
    // Any three consecutive calls span more than one window.
    for (let j = 2; j < starts.length; j++)
      expect(starts[j]!.at - starts[j - 2]!.at).toBeGreaterThanOrEqual(rule.windowMs);
  });

  it("drops a skippable call without spending room", async () => {
    const gate = createRateGate();
    let done = false;
    const ran: string[] = [];
    const rule = { limit: 1, windowMs: 10_000 };
    const first = gate.run({ key: "k", rule, skip: () => done, call: async () => ran.push("status") });
    done = true;
    const second = gate.run({ key: "k2", rule, call: async () => ran.push("other key") });
    await Promise.all([first, second]);
    expect(ran).toEqual(["other key"]);
    expect(await gate.run({ key: "k", rule, call: async () => "answer" })).toBe("answer");
  });

  it("waits out a 429 and runs the call again; gives up loudly after too many", async () => {
    const gate = createRateGate({ maxRateLimitWaits: 2 });
    let n = 0;
    const rule = { limit: 10, windowMs: 10 };
    const ok = await gate.run({
      key: "k",
      rule,
      call: async () => {
        if (++n === 1) throw rateLimited(0.02);
        return "sent";
      },
    });
    expect([ok, n]).toEqual(["sent", 2]);
    await expect(
      gate.run({
        key: "k",
        rule,
        call: async () => {
          throw rateLimited(0.001);
        },
      }),
    ).rejects.toMatchObject({ code: "SLACK_RATE_LIMITED" });
    expect(gate.pending()).toBe(0);
  });

  it("passes other errors through untouched", async () => {
    const gate = createRateGate();
    await expect(
      gate.run({
        key: "k",
        rule: { limit: 1, windowMs: 1 },
        call: async () => {
          throw new Error("channel_not_found");
        },
      }),
    ).rejects.toThrow("channel_not_found");
  });
});
