/**
 * The Redis store while Redis is down: operations fail closed with StoreUnavailableError (never
 * silently undefined), healthy() says so, and the store recovers when Redis returns. Uses a
 * test-owned redis-server that the test kills and restarts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { type Store, StoreUnavailableError } from "../../src/store/types.js";
import { type OwnedRedis, ownedRedis, until } from "../memory/support/redis-server.js";

let server: OwnedRedis | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  await server?.kill();
  store = undefined;
  server = undefined;
});

describe("Redis store when Redis goes away", () => {
  it("fails closed while down and recovers when Redis returns", async () => {
    server = await ownedRedis();
    await server.start();
    store = await createStore({ redisUrl: server.url, dataDir: "unused", prefix: "neo:" });
    expect(store.healthy()).toBe(true);
    await store.set("k", 1);

    await server.kill();
    const s = store;
    await until(() => !s.healthy());
    await expect(s.setIfAbsent("lock", "a", 1000)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(s.take("k")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(s.renewIfEquals("lock", "a", 1000)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(s.compareAndSet("doc", undefined, 1)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(s.append("l", [1])).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(s.get("k")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(s.set("k", 2)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(s.keys("")).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });

    await server.start();
    await until(() => s.healthy());
    expect(await s.setIfAbsent("lock", "b", 1000)).toBe(true);
    expect(await s.append("l", [1])).toBe(1);
    expect(await s.get("lock")).toBe("b");
  });

  it("starts unhealthy when Redis is not there yet, then connects when it appears", async () => {
    server = await ownedRedis();
    store = await createStore({
      redisUrl: server.url,
      dataDir: "unused",
      prefix: "neo:",
      connectWaitMs: 200,
    });
    expect(store.healthy()).toBe(false);
    await expect(store.get("k")).rejects.toBeInstanceOf(StoreUnavailableError);
    await server.start();
    const s = store;
    await until(() => s.healthy());
    await s.set("k", "v");
    expect(await s.get("k")).toBe("v");
  });
});
