/**
 * The Store contract, one suite run against both implementations.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/types.js";
import { updateAtomically } from "../../src/store/update.js";
import { until } from "../memory/support/redis-server.js";
import { type Backend, WITH_CLUSTER } from "../memory/support/stores.js";

for (const { name, factory, skip } of WITH_CLUSTER) {
  describe.skipIf(skip)(`Store contract: ${name}`, () => {
    let backend: Backend;
    let store: Store;
    const open = async (test: string) => {
      backend = factory(test);
      store = await backend.open();
      return store;
    };
    afterEach(async () => {
      await backend.cleanup();
    });

    it("gets, sets and deletes JSON values (copies, not references)", async () => {
      await open("basic");
      expect(await store.get("missing")).toBeUndefined();
      const value = { a: 1, nested: { list: ["x", ":colon", ""] }, n: null };
      await store.set("k", value);
      value.a = 2;
      expect(await store.get("k")).toEqual({ a: 1, nested: { list: ["x", ":colon", ""] }, n: null });
      await store.set("s", "plain string");
      expect(await store.get<string>("s")).toBe("plain string");
      expect(await store.delete("k")).toBe(true);
      expect(await store.delete("k")).toBe(false);
      expect(await store.get("k")).toBeUndefined();
    });

    it("expires values after their TTL, and set without TTL clears it", async () => {
      await open("ttl");
      await store.set("short", 1, 40);
      await store.set("long", 2, 60_000);
      await store.set("cleared", 3, 40);
      await store.set("cleared", 4);
      await until(async () => (await store.get("short")) === undefined);
      expect(await store.get("long")).toBe(2);
      expect(await store.get("cleared")).toBe(4);
      expect(await store.keys("")).not.toContain("short");
    });

    it("setIfAbsent: of 50 concurrent callers exactly one wins; an expired key is absent", async () => {
      await open("nx");
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.setIfAbsent("lock", `owner-${i}`)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(await store.get("lock")).toBe(`owner-${winner}`);
      expect(await store.setIfAbsent("lease", "a", 40)).toBe(true);
      await until(async () => (await store.get("lease")) === undefined);
      expect(await store.setIfAbsent("lease", "b", 1000)).toBe(true);
      expect(await store.get("lease")).toBe("b");
    });

    // Keys of one atomic operation share a hash tag, as src/core/keys.ts makes them: a cluster needs it.
    it("appendOnce: claim, append and marker together; of 50 concurrent callers exactly one appends", async () => {
      await open("once");
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          store.appendOnce("{q}seen:m1", 60_000, "{q}inbox", [{ i }], "{q}pending"),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.range("{q}inbox", 0, -1)).toEqual([{ i: results.indexOf(true) }]);
      expect(await store.keys("{q}pending")).toEqual(["{q}pending"]);
      // Claimed: nothing more is written; once the claim expires the next call appends again.
      await store.delete("{q}pending");
      expect(await store.appendOnce("{q}seen:m1", 40, "{q}inbox", [{ i: -1 }], "{q}pending")).toBe(false);
      expect(await store.length("{q}inbox")).toBe(1);
      expect(await store.keys("{q}pending")).toEqual([]);
      expect(await store.appendOnce("{q}seen:m2", 40, "{q}inbox", [{ i: 100 }], "{q}pending")).toBe(true);
      await until(async () => (await store.get("{q}seen:m2")) === undefined);
      expect(await store.appendOnce("{q}seen:m2", 40, "{q}inbox", [{ i: 101 }], "{q}pending")).toBe(true);
      expect(await store.range("{q}inbox", 1, -1)).toEqual([{ i: 100 }, { i: 101 }]);
    });

    it("appendOnce with a second list: appended only by the claiming call, in the same step and expiry", async () => {
      await open("once-also");
      const group = { keys: ["{s}inbox", "{s}speakers"], ttlMs: 60_000 };
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.appendOnce("{s}seen:m1", 60_000, "{s}inbox", [{ i }], "{s}pending", group, {
            key: "{s}speakers",
            items: [`u${i}`, "x"],
          }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(await store.range("{s}inbox", 0, -1)).toEqual([{ i: winner }]);
      expect(await store.range("{s}speakers", 0, -1)).toEqual([`u${winner}`, "x"]);
      // The second list ends with the group, like the first.
      const short = { keys: ["{s}inbox", "{s}speakers"], ttlMs: 40 };
      expect(
        await store.appendOnce("{s}seen:m2", 60_000, "{s}inbox", [], "{s}pending", short, {
          key: "{s}speakers",
          items: ["y"],
        }),
      ).toBe(true);
      await until(async () => (await store.length("{s}speakers")) === 0);
      expect(await store.length("{s}inbox")).toBe(0);
    });

    it("take: of 50 concurrent callers exactly one gets the value", async () => {
      await open("take");
      await store.set("approval", { plan: "p1", amount: 5 });
      const got = await Promise.all(Array.from({ length: 50 }, () => store.take("approval")));
      expect(got.filter((g) => g !== undefined)).toEqual([{ plan: "p1", amount: 5 }]);
      expect(await store.get("approval")).toBeUndefined();
      expect(await store.take("approval")).toBeUndefined();
    });

    it("renewIfEquals and deleteIfEquals act only while the key holds the value", async () => {
      await open("cas");
      await store.set("lease", { token: "t1" }, 1000);
      expect(await store.renewIfEquals("lease", { token: "other" }, 60_000)).toBe(false);
      expect(await store.renewIfEquals("lease", { token: "t1" }, 60_000)).toBe(true);
      // The probe outlives the lease's original TTL: once it has expired, only a renewal kept the lease.
      await store.set("probe", 1, 1000);
      await until(async () => (await store.get("probe")) === undefined);
      expect(await store.get("lease")).toEqual({ token: "t1" });
      expect(await store.deleteIfEquals("lease", { token: "other" })).toBe(false);
      expect(await store.deleteIfEquals("lease", { token: "t1" })).toBe(true);
      expect(await store.get("lease")).toBeUndefined();
      expect(await store.renewIfEquals("lease", { token: "t1" }, 1000)).toBe(false);
      const renewals = await Promise.all(
        Array.from({ length: 20 }, () => store.deleteIfEquals("lease", { token: "t1" })),
      );
      expect(renewals.every((r) => r === false)).toBe(true);
    });

    it("compareAndSet writes only over the expected value (or absence); 50 racing increments lose none", async () => {
      await open("compare-and-set");
      expect(await store.compareAndSet("doc", { n: 1 }, { n: 2 })).toBe(false);
      expect(await store.get("doc")).toBeUndefined();
      expect(await store.compareAndSet("doc", undefined, { n: 1, list: ["a"] })).toBe(true);
      expect(await store.compareAndSet("doc", undefined, { n: 9 })).toBe(false);
      expect(await store.compareAndSet("doc", { n: 2, list: ["a"] }, { n: 9 })).toBe(false);
      // What get() answered is what compareAndSet compares against.
      const read = await store.get<{ n: number; list: string[] }>("doc");
      expect(await store.compareAndSet("doc", read, { n: 2, list: ["a", "b"] }, 60_000)).toBe(true);
      expect(await store.get("doc")).toEqual({ n: 2, list: ["a", "b"] });
      await expect(store.compareAndSet("doc", read, undefined)).rejects.toThrow(/JSON/);
      // With a TTL the value expires like any other; then it is absent again.
      expect(await store.compareAndSet("short", undefined, 1, 40)).toBe(true);
      await until(async () => (await store.get("short")) === undefined);
      expect(await store.compareAndSet("short", undefined, 2)).toBe(true);
      // Fifty read-modify-writes at once: every one lands exactly once.
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          updateAtomically<number[], number>(store, "ids", (cur) => ({
            next: [...(cur ?? []), i],
            result: i,
          })),
        ),
      );
      expect(outcomes.every((o) => o.written)).toBe(true);
      expect((await store.get<number[]>("ids"))!.sort((a, b) => a - b)).toEqual(
        Array.from({ length: 50 }, (_, i) => i),
      );
      // A change that declines writes nothing and says why.
      const declined = await updateAtomically<number[], string>(store, "ids", () => ({ result: "no" }));
      expect(declined).toMatchObject({ written: false, result: "no" });
    });

    it("updateAtomically from a value read a moment ago: a right guess writes without reading; a wrong or idle one reads", async () => {
      await open("update-known");
      let reads = 0;
      const counted: Store = {
        ...store,
        get: (key) => {
          reads++;
          return store.get(key);
        },
      };
      const add = (n: number) => (cur: number[] | undefined) => ({ next: [...(cur ?? []), n], result: n });
      await store.set("doc", [1]);
      // Right guess: one compare-and-set, no read.
      expect(await updateAtomically(counted, "doc", add(2), { known: { value: [1] } })).toMatchObject({
        value: [1, 2],
        written: true,
      });
      expect(reads).toBe(0);
      // Wrong guess (another writer got there): read, recompute, nothing lost.
      await store.set("doc", [1, 2, 3]);
      expect(await updateAtomically(counted, "doc", add(4), { known: { value: [1, 2] } })).toMatchObject({
        value: [1, 2, 3, 4],
        written: true,
      });
      expect(reads).toBe(1);
      // A guess on which the change writes nothing is not taken on its word: the value is read.
      const idle = (cur: number[] | undefined) =>
        cur?.length ? { result: "kept" } : { next: [0], result: "set" };
      expect(await updateAtomically(counted, "doc", idle, { known: { value: [9] } })).toMatchObject({
        value: [1, 2, 3, 4],
        written: false,
      });
      expect(reads).toBe(2);
      await store.delete("doc");
      expect(await updateAtomically(counted, "doc", idle, { known: { value: [9] } })).toMatchObject({
        value: [0],
        written: true,
      });
    });

    it("incr is atomic under concurrency", async () => {
      await open("incr");
      const values = await Promise.all(Array.from({ length: 50 }, () => store.incr("counter")));
      expect(new Set(values).size).toBe(50);
      expect(Math.max(...values)).toBe(50);
      expect(await store.incr("counter", 10)).toBe(60);
      expect(await store.get("counter")).toBe(60);
    });

    it("lists append, range with negative indexes, and report length", async () => {
      await open("lists");
      expect(await store.length("events")).toBe(0);
      expect(await store.range("events", 0, -1)).toEqual([]);
      expect(await store.append("events", [{ n: 1 }, { n: 2 }])).toBe(2);
      expect(await store.append("events", [])).toBe(2);
      expect(await store.append("events", [{ n: 3 }])).toBe(3);
      expect(await store.range("events", 0, -1)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(await store.range("events", -2, -1)).toEqual([{ n: 2 }, { n: 3 }]);
      expect(await store.range("events", 1, 1)).toEqual([{ n: 2 }]);
      expect(await store.range("events", 5, 10)).toEqual([]);
      expect(await store.length("events")).toBe(3);
      const lens = await Promise.all(Array.from({ length: 30 }, (_, i) => store.append("c", [i])));
      expect(new Set(lens).size).toBe(30);
      expect((await store.range<number>("c", 0, -1)).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 30 }, (_, i) => i),
      );
      expect(await store.delete("events")).toBe(true);
      expect(await store.length("events")).toBe(0);
    });

    it("an expiry group ends every key of it at once, lists included; each write carrying it refreshes them all", async () => {
      await open("expiry");
      const group = { keys: ["{g}:inbox", "{g}:log", "{g}:pending"], ttlMs: 300 };
      expect(await store.appendOnce("{g}:seen:1", 60_000, "{g}:inbox", ["m1"], "{g}:pending", group)).toBe(
        true,
      );
      expect(await store.append("{g}:log", [{ e: 1 }], group)).toBe(1);
      await store.append("other", ["stays"]);
      // Refreshed by each write: still there well past the first write's TTL.
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setTimeout(r, 100));
        expect(await store.append("{g}:log", [{ e: i + 2 }], group)).toBe(i + 2);
      }
      expect(await store.length("{g}:inbox")).toBe(1);
      await until(
        async () => (await store.keys("{g}:")).filter((k) => !k.startsWith("{g}:seen")).length === 0,
      );
      expect(await store.length("{g}:log")).toBe(0);
      expect(await store.range("{g}:inbox", 0, -1)).toEqual([]);
      expect(await store.get("{g}:pending")).toBeUndefined();
      expect(await store.range("other", 0, -1)).toEqual(["stays"]);
      // A list that expired starts empty again, without its old items.
      expect(await store.append("{g}:log", [{ e: "new" }], group)).toBe(1);
      expect(await store.range("{g}:log", 0, -1)).toEqual([{ e: "new" }]);
    });

    it("append with a put writes the value in the same step, with its own TTL; an expiry group with it", async () => {
      await open("put");
      expect(await store.append("{p}:list", ["a"], undefined, { key: "{p}:version", value: "v1" })).toBe(1);
      expect(await store.get("{p}:version")).toBe("v1");
      const group = { keys: ["{p}:list"], ttlMs: 60_000 };
      expect(await store.append("{p}:list", [], group, { key: "{p}:mark", value: { n: 1 }, ttlMs: 40 })).toBe(
        1,
      );
      expect(await store.get("{p}:mark")).toEqual({ n: 1 });
      await until(async () => (await store.get("{p}:mark")) === undefined);
      expect(await store.range("{p}:list", 0, -1)).toEqual(["a"]);
      // A value that cannot be stored writes nothing.
      await expect(
        store.append("{p}:list", ["b"], group, { key: "{p}:mark", value: undefined }),
      ).rejects.toThrow(/JSON/);
      expect(await store.length("{p}:list")).toBe(1);
    });

    it("batch reads values, lengths and ranges of one hash tag in one step, in order", async () => {
      await open("readall");
      expect(await store.batch([])).toEqual([]);
      await store.set("{r}:v", { a: 1 });
      await store.append("{r}:l", [1, 2, 3]);
      const [v, missing, len, none, all, tail, empty] = await store.batch([
        { op: "get", key: "{r}:v" },
        { op: "get", key: "{r}:nothing" },
        { op: "length", key: "{r}:l" },
        { op: "length", key: "{r}:nolist" },
        { op: "range", key: "{r}:l", start: 0, stop: -1 },
        { op: "range", key: "{r}:l", start: -2, stop: -1 },
        { op: "range", key: "{r}:l", start: 5, stop: -1 },
      ]);
      expect(v).toEqual({ a: 1 });
      expect(missing).toBeUndefined();
      expect([len, none]).toEqual([3, 0]);
      expect([all, tail, empty]).toEqual([[1, 2, 3], [2, 3], []]);
    });

    it("batch takes and deletes as its holder in order with its reads; of 50 concurrent takes exactly one gets the value", async () => {
      await open("batch-writes");
      await store.set("{w}:lock", "me");
      await store.set("{w}:mark", 1);
      await store.append("{w}:inbox", ["a", "b"]);
      const [notMine, mark, markAgain, mine, after, inbox] = await store.batch([
        { op: "deleteIfEquals", key: "{w}:lock", value: "you" },
        { op: "take", key: "{w}:mark" },
        { op: "take", key: "{w}:mark" },
        { op: "deleteIfEquals", key: "{w}:lock", value: "me" },
        { op: "get", key: "{w}:lock" },
        { op: "range", key: "{w}:inbox", start: 1, stop: -1 },
      ]);
      expect([notMine, mark, markAgain, mine, after, inbox]).toEqual([
        false,
        1,
        undefined,
        true,
        undefined,
        ["b"],
      ]);
      await store.set("{w}:once", { v: 1 });
      const taken = await Promise.all(
        Array.from({ length: 50 }, () => store.batch([{ op: "take", key: "{w}:once" }])),
      );
      expect(taken.filter(([v]) => v !== undefined)).toEqual([[{ v: 1 }]]);
    });

    it("batch appends, sets and gives TTLs in order with its reads; a value JSON cannot hold writes nothing", async () => {
      await open("batch-appends");
      await store.append("{a}:log", ["x"]);
      await store.set("{a}:mark", 1);
      const [length, same, expired, missing, put, log, mark] = await store.batch([
        { op: "append", key: "{a}:log", items: ["y", { z: 1 }] },
        { op: "append", key: "{a}:log", items: [] },
        { op: "expire", key: "{a}:mark", ttlMs: 1 },
        { op: "expire", key: "{a}:none", ttlMs: 60_000 },
        { op: "set", key: "{a}:put", value: { p: 2 }, ttlMs: 60_000 },
        { op: "range", key: "{a}:log", start: 0, stop: -1 },
        { op: "get", key: "{a}:put" },
      ]);
      expect([length, same, expired, missing, put]).toEqual([3, 3, undefined, undefined, undefined]);
      expect([log, mark]).toEqual([["x", "y", { z: 1 }], { p: 2 }]);
      expect(await store.get("{a}:none")).toBeUndefined();
      // The 1 ms TTL ran out: the mark is gone (polled, not slept for).
      await until(async () => (await store.get("{a}:mark")) === undefined);
      await expect(
        store.batch([
          { op: "append", key: "{a}:log", items: ["w"] },
          { op: "set", key: "{a}:put", value: 10n },
        ]),
      ).rejects.toThrow();
      expect(await store.range("{a}:log", 0, -1)).toEqual(["x", "y", { z: 1 }]);
    });

    it("batch runs the steps after onlyIfLength only when the list holds that many items", async () => {
      await open("batch-guard");
      await store.append("{g}:inbox", ["a"]);
      await store.set("{g}:lock", "me");
      const [len, held, gone, got] = await store.batch([
        { op: "length", key: "{g}:inbox" },
        { op: "onlyIfLength", key: "{g}:inbox", length: 1 },
        { op: "deleteIfEquals", key: "{g}:lock", value: "me" },
        { op: "get", key: "{g}:lock" },
      ]);
      expect([len, held, gone, got]).toEqual([1, true, true, undefined]);
      await store.set("{g}:lock", "me");
      const [ok, deleted, length, range, value] = await store.batch([
        { op: "onlyIfLength", key: "{g}:inbox", length: 0 },
        { op: "deleteIfEquals", key: "{g}:lock", value: "me" },
        { op: "append", key: "{g}:inbox", items: ["b"] },
        { op: "range", key: "{g}:inbox", start: 0, stop: -1 },
        { op: "get", key: "{g}:lock" },
      ]);
      expect([ok, deleted, length, range, value]).toEqual([false, false, 0, [], undefined]);
      expect(await store.get("{g}:lock")).toBe("me");
      expect(await store.range("{g}:inbox", 0, -1)).toEqual(["a"]);
    });

    it("incrAll adds to several counters of one hash tag at once; concurrent calls lose nothing", async () => {
      await open("incrall");
      expect(await store.incrAll([])).toEqual([]);
      await store.incr("{c}:b", 5);
      expect(
        await store.incrAll([
          { key: "{c}:a", by: 2 },
          { key: "{c}:b", by: 3 },
        ]),
      ).toEqual([2, 8]);
      await Promise.all(
        Array.from({ length: 30 }, () =>
          store.incrAll([
            { key: "{c}:a", by: 1 },
            { key: "{c}:b", by: 10 },
          ]),
        ),
      );
      expect(await store.get("{c}:a")).toBe(32);
      expect(await store.get("{c}:b")).toBe(308);
    });

    it("size counts live keys; purge keeps every live key", async () => {
      await open("size");
      await store.set("a", 1);
      await store.append("b", [1, 2]);
      await store.set("c", 3);
      await store.delete("c");
      const size = await store.size();
      expect(size.keys).toBe(2);
      expect(size.bytes).toBeGreaterThan(0);
      await store.purge();
      expect(await store.get("a")).toBe(1);
      expect(await store.range("b", 0, -1)).toEqual([1, 2]);
    });

    it("keys(prefix) lists unprefixed keys literally (glob characters are not patterns)", async () => {
      await open("keys");
      await store.set("conv:a*:1", 1);
      await store.set("conv:ab:2", 2);
      await store.append("conv:a*:list", ["x"]);
      await store.set("other", 3);
      expect(await store.keys("conv:a*")).toEqual(["conv:a*:1", "conv:a*:list"]);
      expect(await store.keys("conv:")).toEqual(["conv:a*:1", "conv:a*:list", "conv:ab:2"]);
      expect(await store.keys("nothing")).toEqual([]);
    });

    it("a new instance over the same data sees everything (restart)", async () => {
      await open("restart");
      await store.set("v", { x: 1 });
      await store.set("ttl", "kept", 60_000);
      await store.append("l", [1, 2]);
      await store.append("l", [3]);
      await store.incr("n", 7);
      await store.set("gone", 1);
      await store.delete("gone");
      await store.take("nothing");
      await store.close();
      const again = await backend.open();
      expect(await again.get("v")).toEqual({ x: 1 });
      expect(await again.get("ttl")).toBe("kept");
      expect(await again.range("l", 0, -1)).toEqual([1, 2, 3]);
      expect(await again.incr("n")).toBe(8);
      expect(await again.get("gone")).toBeUndefined();
      expect(again.healthy()).toBe(true);
      store = again;
    });

    it("rejects values that cannot be stored with a clear error and keeps the old value", async () => {
      await open("bad");
      await store.set("k", 1);
      await expect(store.set("k", undefined)).rejects.toThrow(/JSON/);
      await expect(store.setIfAbsent("k2", undefined)).rejects.toThrow(/JSON/);
      expect(await store.get("k")).toBe(1);
    });
  });
}
