import { afterEach, describe, expect, it, vi } from "vitest";
import { createRateGate, type Reservation } from "../../src/adapters/slack/rate-gate.js";
import { createRateWindows } from "../../src/store/rate-window.js";
import type { RateWindowOp } from "../../src/store/types.js";
import { MB, retainedBytes } from "../support/heap.js";

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
          method: "test.method",
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
    const first = gate.run({
      key: "k",
      method: "test.method",
      rule,
      skip: () => done,
      call: async () => ran.push("status"),
    });
    done = true;
    const second = gate.run({
      key: "k2",
      method: "test.method",
      rule,
      call: async () => ran.push("other key"),
    });
    await Promise.all([first, second]);
    expect(ran).toEqual(["other key"]);
    expect(await gate.run({ key: "k", method: "test.method", rule, call: async () => "answer" })).toBe(
      "answer",
    );
  });

  it("sends an optional call only with room now, else drops it unsent; it never waits", async () => {
    const gate = createRateGate();
    const rule = { limit: 2, windowMs: 60_000 };
    const ran: string[] = [];
    const edit = (name: string) =>
      gate.run({ key: "k", method: "chat.update", rule, optional: true, call: async () => ran.push(name) });
    expect(await Promise.all([edit("a"), edit("b"), edit("c")])).toEqual([1, 2, undefined]);
    expect(ran).toEqual(["a", "b"]);
    expect(gate.waits()).toEqual({});
    expect(gate.pending()).toBe(0);
  });

  it("reserved room is kept from optional calls and spent at once; a reservation is refused when the window is full", async () => {
    const gate = createRateGate();
    const rule = { limit: 3, windowMs: 60_000 };
    const run = (name: string, extra: { optional?: boolean; reservation?: Reservation } = {}) =>
      gate.run({ key: "k", method: "chat.update", rule, ...extra, call: async () => name });
    const landing = gate.reserve("k", "chat.update", rule)!;
    expect(landing).toBeDefined();
    // Two rooms left for optional edits; the reserved one is not theirs.
    expect(await run("edit 1", { optional: true })).toBe("edit 1");
    expect(await run("edit 2", { optional: true })).toBe("edit 2");
    expect(await run("edit 3", { optional: true })).toBeUndefined();
    expect(gate.reserve("k", "chat.update", rule)).toBeUndefined();
    expect(await run("answer", { reservation: landing })).toBe("answer");
    // Spent once.
    await expect(run("again", { reservation: landing })).rejects.toThrow("spent once");
    expect(gate.waits()).toEqual({});
  });

  it("given-back room goes to a waiting call; while one waits, optional calls and reservations yield", async () => {
    const gate = createRateGate();
    const rule = { limit: 1, windowMs: 60_000 };
    const held = gate.reserve("k", "chat.update", rule)!;
    const required = gate.run({ key: "k", method: "chat.delete", rule, call: async () => "required" });
    // The required call waits for room: nothing cosmetic may take room before it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(gate.waits()).toEqual({ k: 1 });
    expect(gate.reserve("k", "chat.update", rule)).toBeUndefined();
    expect(
      await gate.run({ key: "k", method: "chat.delete", rule, optional: true, call: async () => "optional" }),
    ).toBeUndefined();
    held.release();
    expect(await required).toBe("required");
  });

  it("a call in flight holds its room until its answer: a slow optional call is never overtaken at the limit", async () => {
    const gate = createRateGate();
    const rule = { limit: 1, windowMs: 20 };
    const events: string[] = [];
    let release: () => void = () => {};
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A status post goes with the room free, and takes a while to reach Slack and come back.
    const status = gate.run({
      key: "k",
      method: "chat.postMessage",
      rule,
      optional: true,
      call: async () => {
        events.push("status sent");
        await slow;
        events.push("status answered");
      },
    });
    // The answer right behind it waits for the status's answer (Slack may count the status late), not
    // for its start plus a window.
    const answer = gate.run({
      key: "k",
      method: "chat.postMessage",
      rule,
      call: async () => {
        events.push("answer sent");
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 4 * rule.windowMs));
    release();
    await Promise.all([status, answer]);
    expect(events).toEqual(["status sent", "status answered", "answer sent"]);
  });

  it("reserved room its holder never uses lapses: the key is not shrunk for good", async () => {
    const gate = createRateGate({ reservationTtlMs: 30 });
    const rule = { limit: 1, windowMs: 60_000 };
    const forgotten = gate.reserve("k", "chat.update", rule)!;
    // The only room is reserved: a required call waits, and goes once the reservation lapses.
    expect(await gate.run({ key: "k", method: "chat.delete", rule, call: async () => "required" })).toBe(
      "required",
    );
    expect(gate.waits()).toEqual({ k: 1 });
    // Its late holder's call is an ordinary one now (the window is full: it would wait).
    forgotten.release();
    expect(gate.reserve("k", "chat.update", rule)).toBeUndefined();
  });

  it("waits out a 429 and runs the call again; gives up loudly after too many", async () => {
    const gate = createRateGate({ maxRateLimitWaits: 2 });
    let n = 0;
    const rule = { limit: 10, windowMs: 10 };
    const ok = await gate.run({
      key: "k",
      method: "test.method",
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
        method: "test.method",
        rule,
        call: async () => {
          throw rateLimited(0.001);
        },
      }),
    ).rejects.toMatchObject({ code: "SLACK_RATE_LIMITED" });
    expect(gate.pending()).toBe(0);
  });

  it("room asked ahead (an answer being logged) is its post's: the post asks the fleet for none of its own", async () => {
    const windows = createRateWindows();
    const asked: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const store = {
      async rateWindow(key: string, op: RateWindowOp) {
        asked.push(op.op);
        // The early take's answer is held: the post must wait for it, not ask again.
        if (asked.length === 1) await held;
        return windows(key, op);
      },
    };
    const gate = createRateGate({ store });
    const rule = { limit: 1, windowMs: 60_000 };
    gate.ahead("T1:chat.postMessage:C1", rule);
    // Asked at once, before any call runs.
    await vi.waitFor(() => expect(asked).toEqual(["take"]));
    const posted = gate.run({
      key: "T1:chat.postMessage:C1",
      method: "chat.postMessage",
      rule,
      call: async () => "ts",
    });
    release();
    expect(await posted).toBe("ts");
    // One take (ahead), then the call's answer settles it.
    await vi.waitFor(() => expect(asked).toEqual(["take", "settle"]));
    // The window holds that one call: an optional one finds no room.
    const next = gate.run({
      key: "T1:chat.postMessage:C1",
      method: "chat.postMessage",
      rule,
      call: async () => "late",
      optional: true,
    });
    expect(await next).toBeUndefined();
  });

  it("passes other errors through untouched", async () => {
    const gate = createRateGate();
    await expect(
      gate.run({
        key: "k",
        method: "test.method",
        rule: { limit: 1, windowMs: 1 },
        call: async () => {
          throw new Error("channel_not_found");
        },
      }),
    ).rejects.toThrow("channel_not_found");
  });

  describe("in a long-running process", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("forgets idle keys: posting in 20,000 channels leaves no per-channel state; busy keys keep theirs", async () => {
      // The clock is Slack's per-channel window passing (10 ms a post); nothing waits on a timer.
      vi.useFakeTimers({ toFake: ["Date"] });
      const gate = createRateGate();
      const rule = { limit: 1, windowMs: 1000 };
      const post = (channel: string) =>
        gate.run({
          key: `T1:chat.postMessage:${channel}`,
          method: "chat.postMessage",
          rule,
          call: async () => channel,
        });
      // A turn's draft holds room in its channel for the answer, across the whole flood.
      const landing = gate.reserve("T1:chat.update:CKEEP", "chat.update", { limit: 1, windowMs: 60_000 })!;
      for (let i = 0; i < 2000; i++) {
        await post(`CWARM${i}`);
        vi.advanceTimersByTime(10);
      }
      const n = 20_000;
      const retained = await retainedBytes(async () => {
        for (let i = 0; i < n; i++) {
          expect(await post(`C${i}`)).toBe(`C${i}`);
          vi.advanceTimersByTime(10);
        }
      });
      // One state per channel ever posted in held ~14 MB here.
      expect(retained).toBeLessThan(3 * MB);
      // The last channel's window is still full: a cosmetic call there is dropped, not sent.
      const ran: string[] = [];
      const cosmetic = (channel: string) =>
        gate.run({
          key: `T1:chat.postMessage:${channel}`,
          method: "chat.postMessage",
          rule,
          optional: true,
          call: async () => ran.push(channel),
        });
      expect(await cosmetic(`C${n - 1}`)).toBeUndefined();
      expect(await cosmetic("C0")).toBe(1);
      expect(ran).toEqual(["C0"]);
      // The reservation outlived every sweep: its room is still held, and spent at once.
      expect(
        gate.reserve("T1:chat.update:CKEEP", "chat.update", { limit: 1, windowMs: 60_000 }),
      ).toBeUndefined();
      expect(
        await gate.run({
          key: "T1:chat.update:CKEEP",
          method: "chat.update",
          rule: { limit: 1, windowMs: 60_000 },
          reservation: landing,
          call: async () => "answer",
        }),
      ).toBe("answer");
      expect(gate.pending()).toBe(0);
    });
  });
});
