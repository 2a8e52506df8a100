/**
 * Store.takeToken, a user's turn bucket shared by the fleet, against every store (and the run's
 * Redis Cluster, on the user's hash-tagged key): a fresh bucket gives `burst` tokens, then each
 * take is told how long until the refill brings one; on Redis two connections spend one bucket.
 */
import { afterEach, describe, expect, it } from "vitest";
import { userTurnsKey } from "../../src/core/keys.js";
import type { Store } from "../../src/store/types.js";
import { until } from "../memory/support/redis-server.js";
import { type Backend, redis, redisBackend, WITH_CLUSTER } from "../memory/support/stores.js";

/** 3 at once, then one every 200 ms. */
const LIMITS = { perMinute: 300, burst: 3 };
const alice = userTurnsKey("slack:T1:alice");

for (const { name, factory, skip } of WITH_CLUSTER) {
  describe.skipIf(skip)(`Store.takeToken: ${name}`, () => {
    let backend: Backend;
    let store: Store;
    afterEach(async () => {
      await backend.cleanup();
    });

    it("of 8 concurrent takes from a fresh bucket, the burst goes; the rest wait at most one refill, then go", async () => {
      backend = factory("tb-take");
      store = await backend.open();
      const waits = await Promise.all(Array.from({ length: 8 }, () => store.takeToken(alice, LIMITS)));
      expect(waits.filter((w) => w === 0)).toHaveLength(LIMITS.burst);
      for (const w of waits.filter((w) => w > 0)) {
        expect(w).toBeGreaterThan(0);
        expect(w).toBeLessThanOrEqual(60_000 / LIMITS.perMinute);
      }
      // Another user has a bucket of their own.
      expect(await store.takeToken(userTurnsKey("slack:T1:bob"), LIMITS)).toBe(0);
      await until(async () => (await store.takeToken(alice, LIMITS)) === 0);
    });

    it("a token given back can be taken again, and a full bucket given one stays at its burst", async () => {
      backend = factory("tb-return");
      store = await backend.open();
      const carol = userTurnsKey("slack:T1:carol");
      // Refilled too slowly to matter within the test.
      const slow = { perMinute: 1, burst: 3 };
      // Given back to a full bucket: still only the burst goes.
      await store.returnToken(carol, slow);
      const waits = await Promise.all(Array.from({ length: 4 }, () => store.takeToken(carol, slow)));
      expect(waits.filter((w) => w === 0)).toHaveLength(slow.burst);
      // Empty: one given back is there at once, and only one.
      await store.returnToken(carol, slow);
      expect(await store.takeToken(carol, slow)).toBe(0);
      expect(await store.takeToken(carol, slow)).toBeGreaterThan(0);
    });
  });
}

describe.skipIf(!redis.ok)("Store.takeToken: two Redis store instances spend one bucket", () => {
  it("20 takes split over two connections: exactly the burst goes", async () => {
    const backend = redisBackend("tb-shared");
    const [a, b] = [await backend.open(), await backend.open()];
    const waits = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).takeToken(alice, LIMITS)),
    );
    expect(waits.filter((w) => w === 0)).toHaveLength(LIMITS.burst);
    await backend.cleanup();
  });
});
