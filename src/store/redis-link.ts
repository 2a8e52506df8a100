/**
 * The Redis store's connection: one server (`REDIS_URL` a URL) or a Redis Cluster (`REDIS_CLUSTER`
 * true, `REDIS_URL` its seed nodes, comma-separated). The store sees one shape either way: the
 * command client, readiness, and the two whole-keyspace reads (SCAN, memory) that
 * a cluster answers per primary.
 *
 * Failure policy (both kinds): no offline queue, so while a node is unreachable its commands reject
 * at once and the store reports `StoreUnavailableError` instead of hanging. A cluster client learns
 * a new topology only from MOVED/ASK replies, which a crashed primary never sends; node-redis would
 * keep routing its slots to the dead address. So when a command fails on the connection, the link
 * rebuilds the cluster client from the seed nodes (at most one rebuild at a time, spaced by
 * `REBUILD_GAP_MS`), which discovers the promoted replica once the cluster has failed over.
 * A lost connection empties the client-side cache (node-redis clears it on the socket's error, a
 * rebuilt cluster client has a new one): invalidations sent while it was down never arrived.
 */
import { createClient, createCluster } from "@keyv/redis";
import { FamilyCache, FamilyPooledCache } from "./family-cache.js";
import type { StoreLog } from "./types.js";

type SingleClient = ReturnType<typeof newClient>;
type ClusterClient = ReturnType<typeof newCluster>;
/** What the store issues commands on: a server's client, or a cluster's (routed by first key). */
export type RedisCommands = SingleClient | ClusterClient;

export interface RedisLinkOptions {
  /** One URL, or (cluster) several comma-separated seed nodes. */
  url: string;
  cluster: boolean;
  log?: StoreLog;
  /** Whole-key prefixes whose GETs the client-side cache keeps (`CACHED_FAMILIES` under the store's prefix). */
  cached: readonly string[];
}

/**
 * The key families read on every message and seldom written, whose GETs are cached: a channel's
 * settings (core/channels/settings.ts), the access deny list (core/access/policy.ts) and the user
 * and channel directory (adapters' users.ts, places.ts).
 */
export const CACHED_FAMILIES = ["channel:settings:", "access:deny:", "directory:"] as const;

export interface RedisLink {
  /** The command client now (a cluster's is replaced after a topology failure). */
  commands(): RedisCommands;
  /**
   * One command as it goes on the wire (`args`, a cluster routing it by `firstKey`), its reply
   * untransformed: none of the typed command's parser and wrappers, and never the client-side
   * cache (a cached-family GET is `cachedGet`).
   */
  send(firstKey: string, args: string[]): Promise<unknown>;
  /**
   * GET of a cached-family key: the client-side cache's reply when it holds one (no command, no
   * promise), else the key read from Redis (and cached: family-cache.ts).
   */
  cachedGet(key: string): string | null | Promise<string | null>;
  /** Connected and, for a cluster, not rebuilding. */
  ready(): boolean;
  /** Resolves when the first connection is made (or failed: see `ready()`). */
  connecting: Promise<void>;
  /** Every key matching the glob, over every primary. */
  scan(match: string): Promise<string[]>;
  /** Bytes of memory in use, summed over every primary. */
  usedMemory(): Promise<number>;
  /** A command failed on the connection: a cluster re-learns its topology. */
  failed(): void;
  close(): Promise<void>;
}

const REBUILD_GAP_MS = 250;
const SOCKET = {
  connectTimeout: 2000,
  reconnectStrategy: (attempt: number) => Math.min(100 * 2 ** attempt, 2000),
};

function newClient(url: string, cache: FamilyCache) {
  return createClient({
    url,
    RESP: 3,
    clientSideCache: cache,
    disableOfflineQueue: true,
    socket: SOCKET,
  });
}

function newCluster(rootNodes: { url: string }[], cache: FamilyPooledCache) {
  return createCluster({
    rootNodes,
    RESP: 3,
    // One cache for the cluster's node clients, emptied when any node's connection fails.
    clientSideCache: cache,
    defaults: { disableOfflineQueue: true, socket: { ...SOCKET, reconnectStrategy: false } },
  });
}

/** The seed URLs of `REDIS_URL`: one, or (cluster) every comma-separated entry. */
export function redisUrls(url: string): string[] {
  return url
    .split(",")
    .map((u) => u.trim())
    .filter(Boolean);
}

export function openRedisLink(opts: RedisLinkOptions): RedisLink {
  return opts.cluster ? clusterLink(opts) : singleLink(opts);
}

/** Tell connection transitions once each way; node-redis crashes the process on an unheard 'error'. */
function transitions(log: StoreLog | undefined) {
  let down = false;
  return {
    error(err: Error) {
      if (!down) log?.warn({ err: err.message }, "Redis unreachable; store unavailable until it returns");
      down = true;
    },
    ready() {
      if (down) log?.info("Redis reachable again; store recovered");
      down = false;
    },
  };
}

function singleLink(opts: RedisLinkOptions): RedisLink {
  const cache = new FamilyCache(opts.cached);
  const client: SingleClient = newClient(opts.url, cache);
  const told = transitions(opts.log);
  client.on("error", (err: Error) => told.error(err));
  client.on("ready", () => told.ready());
  const connecting = client.connect().then(
    () => {},
    (err: unknown) => opts.log?.warn({ err: (err as Error).message }, "Redis connection failed"),
  );
  return {
    commands: () => client,
    send: (_firstKey, args) => client.sendCommand(args),
    cachedGet: (key) => {
      const hit = cache.families.hit(key);
      return hit ? hit.reply : client.get(key);
    },
    ready: () => client.isReady,
    connecting,
    scan: (match) => scanNode(client, match),
    usedMemory: () => memoryOf(client),
    failed: () => {},
    close: async () => {
      if (client.isReady) await client.close();
      else if (client.isOpen) client.destroy();
    },
  };
}

function clusterLink(opts: RedisLinkOptions): RedisLink {
  const told = transitions(opts.log);
  const rootNodes = redisUrls(opts.url).map((url) => ({ url }));
  let closed = false;
  let current: { client: ClusterClient; cache: FamilyPooledCache; ready: boolean } | undefined;
  let rebuilding: Promise<void> | undefined;
  let lastBuild = 0;

  async function build(): Promise<void> {
    lastBuild = Date.now();
    // Node clients fail fast (no offline queue) and do not reconnect on their own: a lost node
    // is a reason to re-learn the topology, which `failed()` does.
    const cache = new FamilyPooledCache(opts.cached);
    const client: ClusterClient = newCluster(rootNodes, cache);
    client.on("error", (err: Error) => told.error(err));
    // A node lost (crash, failover): re-learn the topology before a command has to fail on it.
    client.on("node-error", () => {
      if (current?.client === client) void rebuild();
    });
    const next = { client, cache, ready: false };
    const old = current;
    try {
      await client.connect();
      next.ready = true;
      told.ready();
    } catch (err) {
      told.error(err as Error);
      discard(client);
      // No seed answered: try again in the background, so health recovers without traffic.
      if (!closed) setTimeout(() => void rebuild(), 1000).unref();
      return;
    }
    if (closed) {
      discard(client);
      return;
    }
    current = next;
    if (old) discard(old.client);
  }

  function rebuild(): Promise<void> {
    if (closed) return Promise.resolve();
    rebuilding ??= (async () => {
      const wait = lastBuild + REBUILD_GAP_MS - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (current) current.ready = false;
      await build();
    })().finally(() => {
      rebuilding = undefined;
    });
    return rebuilding;
  }

  const connecting = build();
  const now = () => {
    if (!current) throw new Error("Redis Cluster not connected");
    return current;
  };
  return {
    commands: () => now().client,
    send: (firstKey, args) => now().client.sendCommand(firstKey, false, args),
    cachedGet: (key) => {
      const { client, cache } = now();
      const hit = cache.families.hit(key);
      return hit ? hit.reply : client.get(key);
    },
    ready: () => Boolean(current?.ready) && !rebuilding,
    connecting,
    scan: async (match) => {
      const { client } = now();
      const pages = await Promise.all(
        client.masters.map(async (m) => scanNode(await client.nodeClient(m), match)),
      );
      return pages.flat();
    },
    usedMemory: async () => {
      const { client } = now();
      const each = await Promise.all(client.masters.map(async (m) => memoryOf(await client.nodeClient(m))));
      return each.reduce((a, b) => a + b, 0);
    },
    failed: () => {
      void rebuild();
    },
    close: async () => {
      closed = true;
      await rebuilding;
      if (current) {
        discard(current.client);
        current = undefined;
      }
    },
  };
}

type NodeClient = Pick<SingleClient, "scan" | "info">;

async function scanNode(client: NodeClient, match: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = "0";
  do {
    const page = await client.scan(cursor, { MATCH: match, COUNT: 1000 });
    cursor = String(page.cursor);
    for (const key of page.keys) out.push(String(key));
  } while (cursor !== "0");
  return out;
}

async function memoryOf(client: NodeClient): Promise<number> {
  const info = await client.info("memory");
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

/**
 * Drop a cluster client: close each node connection still open. Not `cluster.destroy()`: it throws
 * ClientClosedError at the first node already closed (the lost one) and leaves the rest open.
 */
function discard(client: ClusterClient): void {
  for (const node of [...client.masters, ...client.replicas]) {
    if (node.client?.isOpen) node.client.destroy();
  }
}
