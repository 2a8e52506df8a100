/**
 * The Redis link's client-side cache (issue 30) across instances: two links on one Redis (or one
 * Redis Cluster) are two Neo processes. A key one of them has read is answered from its memory, and
 * a write by the other (an admin denying a user on instance B) reaches it anyway, because Redis
 * pushes the invalidation; a connection lost and made again never serves what it cached before.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  CACHED_FAMILIES,
  openRedisLink,
  type RedisCommands,
  type RedisLink,
} from "../../src/store/redis-link.js";
import { until } from "../memory/support/redis-server.js";
import { clusterUrl, redis } from "../memory/support/stores.js";
import { uniquePrefix } from "../support/redis.js";

const TARGETS = [
  { name: "one server", url: redis.url, cluster: false, skip: !redis.ok },
  { name: "Redis Cluster", url: clusterUrl, cluster: true, skip: !clusterUrl },
];

/** GETs this client answered from its cache so far. */
const hits = (c: RedisCommands) => c.clientSideCache?.stats().hitCount ?? 0;

/** A's reads: the store's (`cachedGet`, answered without a command when cached) and node-redis's GET. */
const READS = [
  { name: "cachedGet", get: (l: RedisLink, key: string) => Promise.resolve(l.cachedGet(key)) },
  { name: "GET", get: (l: RedisLink, key: string) => l.commands().get(key) },
];

for (const target of TARGETS)
  for (const read of READS) {
    describe.skipIf(target.skip)(`Redis client-side cache: ${target.name}, ${read.name}`, () => {
      const links: RedisLink[] = [];
      const written: string[] = [];
      // One store prefix for both instances, as two Neo processes of one deployment.
      const prefix = uniquePrefix("csc");
      const open = async () => {
        const cached = CACHED_FAMILIES.map((f) => `${prefix}${f}`);
        const link = openRedisLink({ url: target.url, cluster: target.cluster, cached });
        links.push(link);
        await link.connecting;
        expect(link.ready()).toBe(true);
        return link;
      };
      afterEach(async () => {
        const any = links.find((l) => l.ready());
        for (const key of written.splice(0)) await any?.commands().del(key);
        for (const l of links.splice(0)) await l.close();
      });

      it("a read is cached; another instance's write, set or delete, reaches it", async () => {
        const [a, b] = [await open(), await open()];
        const deny = `${prefix}access:deny:{slack:T1:U1}`;
        written.push(deny);

        // Absent is cached too: the deny list's usual answer.
        expect(await read.get(a, deny)).toBeNull();
        const before = hits(a.commands());
        expect(await read.get(a, deny)).toBeNull();
        expect(hits(a.commands())).toBe(before + 1);

        // Instance B denies the user: A sees it once Redis's push reaches A (it travels apart from
        // B's reply, so A may answer from its cache for that flight; bounded here).
        await b.commands().set(deny, '{"by":"admin"}');
        await until(async () => (await read.get(a, deny)) === '{"by":"admin"}', 400, 10);
        // Read again, cached again.
        const again = hits(a.commands());
        expect(await read.get(a, deny)).toBe('{"by":"admin"}');
        expect(hits(a.commands())).toBe(again + 1);

        await b.commands().del(deny);
        await until(async () => (await read.get(a, deny)) === null, 400, 10);
      });

      it("a key outside the cached families is read from Redis every time (a lease, a claim)", async () => {
        const [a, b] = [await open(), await open()];
        const lock = `${prefix}conv:lock:{slack:T1:C1:1.0}`;
        written.push(lock);
        await b.commands().set(lock, "b#1");
        const before = hits(a.commands());
        expect(await read.get(a, lock)).toBe("b#1");
        expect(await read.get(a, lock)).toBe("b#1");
        expect(hits(a.commands())).toBe(before);
        // No push to wait for: B's write is what A's next read returns.
        await b.commands().set(lock, "b#2");
        expect(await read.get(a, lock)).toBe("b#2");
      });

      it("a lost connection drops the cache: a write while it was down is seen after", async () => {
        const [a, b] = [await open(), await open()];
        const key = `${prefix}channel:settings:slack:T1:C1`;
        written.push(key);
        await b.commands().set(key, '"v1"');
        // Cached once read after B's write was pushed (a read that crosses the push is not kept).
        await until(
          async () => {
            const before = hits(a.commands());
            expect(await read.get(a, key)).toBe('"v1"');
            return hits(a.commands()) === before + 1;
          },
          400,
          10,
        );

        // Cut A's connections (each kills itself, so no other client on the server is touched).
        await killConnections(a.commands());
        // Written while A is cut off: no invalidation can reach A for it.
        await b.commands().set(key, '"v2"');
        // Reads fail until A is back (no offline queue); a cache kept across the cut would say "v1".
        const after = () => read.get(a, key).catch(() => null);
        await until(async () => (await after()) === '"v2"', 400, 10);
      });
    });
  }

/** Each of the client's server connections kills itself (SKIPME no: by default a client spares itself). */
async function killConnections(c: RedisCommands): Promise<void> {
  const nodes = "masters" in c ? await Promise.all(c.masters.map((m) => c.nodeClient(m))) : [c];
  for (const node of nodes) {
    const id = await node.clientId();
    expect(await node.sendCommand(["CLIENT", "KILL", "ID", String(id), "SKIPME", "no"])).toBe(1);
  }
}
