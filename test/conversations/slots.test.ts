/**
 * The turn slots' fair share (DESIGN.md, Fairness), on a clock the test moves: a freed slot goes to
 * the waiting user with the fewest turns running, so one user's backlog delays another user's first
 * turn by at most one running turn; a user's burst beyond their bucket waits for the refill, is told
 * once, and loses nothing.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createSlots,
  type SlotClock,
  type SlotGrant,
  SlotsClosedError,
} from "../../src/core/conversations/slots.js";
import { createFileStore } from "../../src/store/file-store.js";
import type { BucketLimits, Store } from "../../src/store/types.js";

/** A clock that only moves when told to, firing what falls due. */
function manualClock(): SlotClock & { advance(ms: number): void } {
  let now = 1_000_000;
  let timers: Array<{ at: number; fn: () => void }> = [];
  return {
    now: () => now,
    after(ms, fn) {
      const t = { at: now + ms, fn };
      timers.push(t);
      return () => {
        timers = timers.filter((x) => x !== t);
      };
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
    },
  };
}

const ROOMY = { perMinute: 1_000_000, burst: 1_000_000 };

const opened: Array<{ store: Store; dir: string }> = [];
afterEach(async () => {
  for (const { store, dir } of opened.splice(0)) {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

/** Slots whose users' buckets are in an embedded store on the test's clock. */
async function slotsOn(size: number, bucket: BucketLimits, clock: SlotClock) {
  const dir = await mkdtemp(join(tmpdir(), "neo-slots-"));
  const store = await createFileStore({ dataDir: dir, prefix: "t:", now: clock.now });
  opened.push({ store, dir });
  return createSlots({ size, clock, takeToken: (user) => store.takeToken(`rate:user:${user}`, bucket) });
}

/** Acquire, recording the order of grants under `label`. */
function taker(slots: Awaited<ReturnType<typeof slotsOn>>, order: string[]) {
  const grants = new Map<string, SlotGrant>();
  const queued = new Map<string, number>();
  const throttled = new Map<string, number>();
  return {
    grants,
    queued,
    throttled,
    ask(label: string, user: string) {
      void slots
        .acquire({
          user,
          onQueued: (p) => queued.set(label, p),
          onThrottled: (ms) => throttled.set(label, ms),
        })
        .then((g) => {
          order.push(label);
          grants.set(label, g);
        });
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe("turn slots shared fairly across users", () => {
  it("gives a freed slot to a user with nothing running before a user with a backlog", async () => {
    const order: string[] = [];
    const slots = await slotsOn(2, ROOMY, manualClock());
    const t = taker(slots, order);
    // Alice's first two take the slots (each takes her token from the store first), then she asks more.
    t.ask("a1", "alice");
    t.ask("a2", "alice");
    await settle();
    for (let i = 3; i <= 6; i++) t.ask(`a${i}`, "alice");
    t.ask("b1", "bob");
    await settle();
    expect(order).toEqual(["a1", "a2"]);
    expect([slots.running, slots.waiting]).toEqual([2, 5]);
    // Bob arrived after four of Alice's waiting turns, and is still next.
    expect(t.queued.get("b1")).toBe(1);
    expect(t.queued.get("a3")).toBe(1);
    expect(t.grants.get("a1")!.contended()).toBe(true);
    t.grants.get("a1")!.release();
    await settle();
    expect(order).toEqual(["a1", "a2", "b1"]);
    // Then Alice's, in the order she asked.
    t.grants.get("a2")!.release();
    t.grants.get("b1")!.release();
    await settle();
    expect(order).toEqual(["a1", "a2", "b1", "a3", "a4"]);
  });

  it("with one slot, alternates: the user just served goes behind a user not served yet", async () => {
    const order: string[] = [];
    const slots = await slotsOn(1, ROOMY, manualClock());
    const t = taker(slots, order);
    for (const label of ["a1", "a2", "a3"]) t.ask(label, "alice");
    t.ask("b1", "bob");
    t.ask("b2", "bob");
    await settle();
    expect(t.queued.get("b1")).toBe(1);
    for (let i = 0; i < 4; i++) {
      t.grants.get(order.at(-1)!)!.release();
      await settle();
    }
    expect(order).toEqual(["a1", "b1", "a2", "b2", "a3"]);
  });

  it("among users with the same running count, serves the one waiting longest", async () => {
    const order: string[] = [];
    const slots = await slotsOn(1, ROOMY, manualClock());
    const t = taker(slots, order);
    t.ask("x", "xena");
    t.ask("b1", "bob");
    t.ask("c1", "carol");
    t.ask("b2", "bob");
    await settle();
    for (const next of ["b1", "c1", "b2"]) {
      t.grants.get(order.at(-1)!)!.release();
      await settle();
      expect(order.at(-1)).toBe(next);
    }
    // Nothing waits any more: a holder has no reason to yield.
    expect(t.grants.get("b2")!.contended()).toBe(false);
  });

  it("holds a burst beyond the bucket for the refill, tells it once, and drops nothing", async () => {
    const clock = manualClock();
    const order: string[] = [];
    const slots = await slotsOn(10, { perMinute: 60, burst: 2 }, clock);
    const t = taker(slots, order);
    for (let i = 1; i <= 5; i++) t.ask(`a${i}`, "alice");
    await settle();
    t.ask("b1", "bob");
    await settle();
    // Two from the burst, and Bob at once: the slots are free, only Alice's bucket is empty.
    expect(order).toEqual(["a1", "a2", "b1"]);
    expect([...t.throttled.entries()]).toEqual([["a3", 1000]]);
    expect(t.queued.size).toBe(0);
    expect(slots.throttled).toBe(1);
    for (const next of ["a3", "a4", "a5"]) {
      clock.advance(1000);
      await settle();
      expect(order.at(-1)).toBe(next);
    }
    expect(t.throttled.size).toBe(1);
    expect([slots.waiting, slots.throttled]).toEqual([0, 0]);
    // A later burst, once the first has drained and the bucket refilled, is told again.
    clock.advance(2000);
    for (const label of ["a6", "a7", "a8"]) t.ask(label, "alice");
    await settle();
    expect(order.slice(-2)).toEqual(["a6", "a7"]);
    expect(t.throttled.get("a8")).toBe(1000);
  });

  it("a throttled user never holds a slot another user could use", async () => {
    const clock = manualClock();
    const order: string[] = [];
    const slots = await slotsOn(1, { perMinute: 6, burst: 1 }, clock);
    const t = taker(slots, order);
    t.ask("a1", "alice");
    t.ask("a2", "alice");
    t.ask("b1", "bob");
    await settle();
    t.grants.get("a1")!.release();
    await settle();
    // Alice's next turn waits 10 s for a token; Bob's goes now.
    expect(order).toEqual(["a1", "b1"]);
    t.grants.get("b1")!.release();
    await settle();
    expect(order).toEqual(["a1", "b1"]);
    clock.advance(10_000);
    await settle();
    expect(order).toEqual(["a1", "b1", "a2"]);
  });

  it("close refuses every waiter and every later caller", async () => {
    const slots = await slotsOn(1, ROOMY, manualClock());
    await slots.acquire({ user: "u" });
    const waiting = slots.acquire({ user: "v" });
    slots.close();
    await expect(waiting).rejects.toBeInstanceOf(SlotsClosedError);
    await expect(slots.acquire({ user: "w" })).rejects.toBeInstanceOf(SlotsClosedError);
    expect(slots.waiting).toBe(0);
  });
});
