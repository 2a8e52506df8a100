/**
 * Store.rateWindow, the shared rate budget, against both stores: at most `limit` calls count in any
 * window, reserved room counts until spent or given back, a block holds everyone off, and a
 * required call that waits keeps optional ones from taking its room. On Redis, two store instances
 * (two processes' connections) spend one budget.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/types.js";
import { until } from "../memory/support/redis-server.js";
import { BACKENDS, type Backend, redis, redisBackend } from "../memory/support/stores.js";

const rule = { limit: 3, windowMs: 400 };
let n = 0;
const id = () => `call-${++n}`;
const take = (s: Store, key = "k", extra: { holdMs?: number; yields?: boolean } = {}) =>
  s.rateWindow(key, { op: "take", id: id(), ...rule, ...extra });

for (const { name, factory, skip } of BACKENDS) {
  describe.skipIf(skip)(`Store.rateWindow: ${name}`, () => {
    let backend: Backend;
    let store: Store;
    afterEach(async () => {
      await backend.cleanup();
    });
    const open = async (test: string) => {
      backend = factory(test);
      store = await backend.open();
    };

    it("of 10 concurrent takes, exactly the limit goes; the others are told how long to wait, and then go", async () => {
      await open("rw-take");
      const waits = await Promise.all(Array.from({ length: 10 }, () => take(store)));
      expect(waits.filter((w) => w === 0)).toHaveLength(3);
      for (const w of waits.filter((w) => w > 0)) expect(w).toBeLessThanOrEqual(rule.windowMs);
      // Other keys have their own window.
      expect(await take(store, "other")).toBe(0);
      await until(async () => (await take(store)) === 0);
    });

    it("reserved room counts until it is spent or given back; a spent one counts from then", async () => {
      await open("rw-reserve");
      const held = await Promise.all(
        ["r1", "r2"].map((r) => store.rateWindow("k", { op: "take", id: r, ...rule, holdMs: 60_000 })),
      );
      expect(held).toEqual([0, 0]);
      expect(await take(store)).toBe(0);
      expect(await take(store)).toBeGreaterThan(0);
      await store.rateWindow("k", { op: "release", id: "r1", windowMs: rule.windowMs });
      expect(await take(store)).toBe(0);
      // r2 is spent at once though the window is full: its room was taken when it was reserved.
      expect(await store.rateWindow("k", { op: "spend", id: "r2", ...rule })).toBe(0);
      // A reservation nobody holds (given back, or lapsed) is an ordinary call: it waits for room.
      expect(await store.rateWindow("k", { op: "spend", id: "r1", ...rule })).toBeGreaterThan(0);
    });

    it("a call held for its flight counts until it is settled, then from its answer", async () => {
      await open("rw-settle");
      const one = { limit: 1, windowMs: 200 };
      expect(await store.rateWindow("k", { op: "take", id: "f", ...one, holdMs: 60_000 })).toBe(0);
      expect(await store.rateWindow("k", { op: "take", id: id(), ...one })).toBeGreaterThan(1000);
      await store.rateWindow("k", { op: "settle", id: "f", windowMs: one.windowMs });
      const wait = await store.rateWindow("k", { op: "take", id: id(), ...one });
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(one.windowMs);
      await until(async () => (await store.rateWindow("k", { op: "take", id: id(), ...one })) === 0);
      // Settling what is not held writes nothing.
      await store.rateWindow("k", { op: "settle", id: "unknown", windowMs: one.windowMs });
      expect(await store.rateWindow("k", { op: "take", id: id(), ...one })).toBeGreaterThan(0);
    });

    it("a reservation that lapses stops counting: when its hold ends, not a window later", async () => {
      await open("rw-lapse");
      for (const r of ["a", "b", "c"])
        expect(await store.rateWindow("k", { op: "take", id: r, ...rule, holdMs: 1000 })).toBe(0);
      // Full until the holds end (1000 ms), then free: counting them a window past it would say 1400.
      expect(await take(store)).toBeLessThanOrEqual(1000);
      await until(async () => (await take(store)) === 0);
    });

    it("a block holds every take and spend off until it ends", async () => {
      await open("rw-block");
      expect(await store.rateWindow("k", { op: "take", id: "r", ...rule, holdMs: 60_000 })).toBe(0);
      await store.rateWindow("k", { op: "block", ms: 300, windowMs: rule.windowMs });
      const wait = await take(store);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(300);
      expect(await store.rateWindow("k", { op: "spend", id: "r", ...rule })).toBeGreaterThan(0);
      await until(async () => (await store.rateWindow("k", { op: "spend", id: "r", ...rule })) === 0);
    });

    it("while a required call waits for room, optional takes yield even once room frees", async () => {
      await open("rw-wanted");
      // One call per 500 ms: a waiting required call keeps the key wanted 500 ms past its room.
      const one = { limit: 1, windowMs: 500 };
      const ask = (yields: boolean) => store.rateWindow("k", { op: "take", id: id(), ...one, yields });
      expect(await ask(false)).toBe(0);
      const refusedAt = Date.now();
      const wait = await ask(false);
      expect(wait).toBeGreaterThan(0);
      // Optional calls keep asking until the required call's room has freed: none gets it.
      const optional: number[] = [];
      while (Date.now() < refusedAt + wait + 20) {
        optional.push(await ask(true));
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(optional.every((w) => w > 0)).toBe(true);
      // The required call comes back and finds its room.
      expect(await ask(false)).toBe(0);
    });
  });
}

describe.skipIf(!redis.ok)("Store.rateWindow: two Redis store instances spend one budget", () => {
  it("40 takes split over two connections: exactly the limit goes", async () => {
    const backend = redisBackend("rw-shared");
    const [a, b] = [await backend.open(), await backend.open()];
    const waits = await Promise.all(Array.from({ length: 40 }, (_, i) => take(i % 2 ? a : b)));
    expect(waits.filter((w) => w === 0)).toHaveLength(3);
    await b.rateWindow("k", { op: "block", ms: 5000, windowMs: rule.windowMs });
    expect(await take(a, "k")).toBeGreaterThan(4000);
    await backend.cleanup();
  });
});
