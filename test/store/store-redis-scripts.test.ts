/**
 * The Redis store's scripts go by their SHA-1 (EVALSHA): their text (hundreds of bytes, hashed by
 * Redis on every EVAL) is sent only when Redis does not hold them, on the first call and after Redis
 * lost its script cache (a restart, a failover to a replica that never ran them: SCRIPT FLUSH here).
 * A test-owned redis-server, so its command statistics are this test's alone.
 */
import { createClient } from "@keyv/redis";
import { afterEach, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type OwnedRedis, ownedRedis } from "../memory/support/redis-server.js";

let server: OwnedRedis | undefined;
let store: Store | undefined;
let admin: ReturnType<typeof createClient> | undefined;
afterEach(async () => {
  await store?.close();
  await admin?.close();
  await server?.kill();
  store = undefined;
  admin = undefined;
  server = undefined;
});

/** Calls of one command so far, from INFO commandstats (`cmdstat_eval:calls=3,…`). */
async function calls(client: ReturnType<typeof createClient>, command: string): Promise<number> {
  const info = await client.info("commandstats");
  const m = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, "m").exec(info);
  return m ? Number(m[1]) : 0;
}

describe("Redis store scripts", () => {
  it("sends a script's text once, runs it by SHA after, and sends it again when Redis lost it", async () => {
    server = await ownedRedis();
    await server.start();
    store = await createStore({ redisUrl: server.url, dataDir: "unused", prefix: "neo:" });
    admin = createClient({ url: server.url });
    await admin.connect();

    for (let v = 1; v <= 5; v++)
      expect(await store.compareAndSet("doc", v === 1 ? undefined : v - 1, v)).toBe(true);
    expect(await calls(admin, "eval")).toBe(1);
    expect(await calls(admin, "evalsha")).toBeGreaterThanOrEqual(4);

    await admin.scriptFlush();
    expect(await store.compareAndSet("doc", 5, 6)).toBe(true);
    expect(await store.compareAndSet("doc", 5, 7)).toBe(false);
    expect(await store.get("doc")).toBe(6);
    expect(await calls(admin, "eval")).toBe(2);
  });
});
