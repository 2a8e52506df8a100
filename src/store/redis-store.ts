/**
 * The Redis store: every operation is a command (or a script) on the `@redis/client` connection, keys
 * under the prefix, values in the JSON encoding of codec.ts (the file store writes the same). The
 * connection is one server or a Redis Cluster (redis-link.ts); the scripts are redis-scripts.ts, run
 * by their SHA-1 (EVALSHA), their text sent only when Redis does not hold them yet (NOSCRIPT: the
 * first call, or after a restart or failover), so an answer's path does not send and hash it each time.
 *
 * Failure policy: the client runs without an offline queue, so while Redis is unreachable every
 * operation rejects at once with `StoreUnavailableError` (nothing fails open, nothing hangs), and
 * `healthy()` is false. The client keeps reconnecting and the store recovers when Redis returns.
 */
import { createHash } from "node:crypto";
import { decode, encode, globEscape } from "./codec.js";
import { CACHED_FAMILIES, openRedisLink, redisUrls } from "./redis-link.js";
import {
  APPEND,
  APPEND_ONCE,
  BATCH,
  batchArgs,
  COMPARE_AND_SET,
  DELETE_IF_EQUALS,
  INCR_ALL,
  ONE,
  RATE_WINDOW,
  RENEW_IF_EQUALS,
  rateWindowArgs,
  stepResult,
  TAKE_TOKEN,
} from "./redis-scripts.js";
import {
  type Expiry,
  type ListItems,
  type Put,
  type Store,
  type StoreLog,
  type StoreStep,
  StoreUnavailableError,
  skipped,
} from "./types.js";

export interface RedisStoreOptions {
  /** One URL, or with `cluster` the seed nodes, comma-separated. */
  url: string;
  /** `REDIS_CLUSTER`: `url` lists Redis Cluster seed nodes. */
  cluster?: boolean;
  /** Namespace for every key (e.g. `neo:`). */
  prefix: string;
  /** How long creation waits for the first connection before returning an unhealthy store. */
  connectWaitMs?: number;
  /** Where connection transitions are told (down, back, unreachable at start); none = not told. */
  log?: StoreLog;
}

const shas = new Map<string, string>();
/** A script's SHA-1, as Redis names it (computed once per script). */
function shaOf(text: string): string {
  let sha = shas.get(text);
  if (!sha) {
    sha = createHash("sha1").update(text).digest("hex");
    shas.set(text, sha);
  }
  return sha;
}

export async function createRedisStore(opts: RedisStoreOptions): Promise<Store> {
  const { prefix } = opts;
  const link = openRedisLink({
    url: opts.url,
    cluster: opts.cluster ?? false,
    log: opts.log,
    cached: CACHED_FAMILIES.map((f) => `${prefix}${f}`),
  });
  let closed = false;
  const waitMs = opts.connectWaitMs ?? 2000;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([link.connecting, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
  clearTimeout(timer);
  if (!link.ready())
    opts.log?.warn(
      { url: redisUrls(opts.url).map(redact).join(",") },
      "Redis not reachable at start-up; retrying",
    );

  const k = (key: string) => `${prefix}${key}`;
  const isCached = (key: string) => CACHED_FAMILIES.some((f) => key.startsWith(f));

  /** A command's failure: while Redis is not ready, or on the connection, StoreUnavailableError. */
  const failure = (op: string, err: unknown): unknown => {
    if (!link.ready() || isConnectionError(err)) {
      link.failed();
      return new StoreUnavailableError(`store unavailable: ${(err as Error).message} (${op})`, {
        cause: err,
      });
    }
    return err;
  };
  const ready = (op: string): void => {
    if (link.ready()) return;
    link.failed();
    throw new StoreUnavailableError(`store unavailable: Redis is unreachable (${op})`);
  };

  // Commands go out as their wire arguments (`link.send`): node-redis's typed commands add a parser,
  // two async wrappers and a reply transform per command, CPU on every message (issue 30).
  /** One command on `key`. */
  async function send<R>(op: string, key: string, args: string[]): Promise<R> {
    ready(op);
    try {
      return (await link.send(key, args)) as R;
    } catch (err) {
      throw failure(op, err);
    }
  }

  /** Run one of redis-scripts.ts by its SHA-1; on NOSCRIPT, by its text (which loads it). */
  async function script(op: string, text: string, keys: string[], argv: string[]): Promise<unknown> {
    ready(op);
    const args = ["EVALSHA", shaOf(text), String(keys.length)];
    for (const key of keys) args.push(key);
    for (const arg of argv) args.push(arg);
    try {
      try {
        return await link.send(keys[0]!, args);
      } catch (err) {
        if (!(err instanceof Error && err.message.startsWith("NOSCRIPT"))) throw err;
        // Written and answered: the same arguments can go again, by the text (as node-redis's own do).
        args[0] = "EVAL";
        args[1] = text;
        return await link.send(keys[0]!, args);
      }
    } catch (err) {
      throw failure(op, err);
    }
  }

  /** GET; the cached families' through the client-side cache (family-cache.ts). */
  async function read(op: string, key: string): Promise<string | null> {
    if (!isCached(key)) return send<string | null>(op, k(key), ["GET", k(key)]);
    ready(op);
    try {
      return await link.cachedGet(k(key));
    } catch (err) {
      throw failure(op, err);
    }
  }

  const px = (ms: number) => String(Math.max(1, Math.round(ms)));

  return {
    kind: "redis",
    get: async <T>(key: string) => {
      const raw = await read("get", key);
      return raw === null ? undefined : decode<T>(raw);
    },
    set: async <T>(key: string, value: T, ttlMs?: number) => {
      const args = ["SET", k(key), encode(value)];
      if (ttlMs) args.push("PX", String(ttlMs));
      await send("set", args[1]!, args);
    },
    delete: async (key) => (await send<number>("delete", k(key), ["DEL", k(key)])) > 0,
    setIfAbsent: async <T>(key: string, value: T, ttlMs?: number) => {
      const args = ["SET", k(key), encode(value)];
      if (ttlMs) args.push("PX", String(ttlMs));
      args.push("NX");
      return (await send("setIfAbsent", args[1]!, args)) === "OK";
    },
    take: async <T>(key: string) => {
      const raw = await send<string | null>("take", k(key), ["GETDEL", k(key)]);
      return raw === null ? undefined : decode<T>(raw);
    },
    renewIfEquals: async <T>(key: string, value: T, ttlMs: number) =>
      (await script("renewIfEquals", RENEW_IF_EQUALS, [k(key)], [encode(value), String(ttlMs)])) === 1,
    deleteIfEquals: async <T>(key: string, value: T) =>
      (await script("deleteIfEquals", DELETE_IF_EQUALS, [k(key)], [encode(value)])) === 1,
    compareAndSet: async <T>(key: string, expected: T | undefined, next: T, ttlMs?: number) =>
      (await script(
        "compareAndSet",
        COMPARE_AND_SET,
        [k(key)],
        [
          expected === undefined ? "0" : "1",
          expected === undefined ? "" : encode(expected),
          encode(next),
          ttlMs ? String(ttlMs) : "",
        ],
      )) === 1,
    appendOnce: async <T>(
      claimKey: string,
      claimTtlMs: number,
      listKey: string,
      items: readonly T[],
      markerKey: string,
      expiry?: Expiry,
      also?: ListItems,
    ) => {
      const keys = [k(claimKey), k(listKey), k(markerKey)];
      if (also) keys.push(k(also.key));
      for (const key of expiry?.keys ?? []) keys.push(k(key));
      const argv = [
        ONE,
        String(claimTtlMs),
        expiry ? px(expiry.ttlMs) : "",
        String(items.length),
        also ? "1" : "0",
      ];
      for (const item of items) argv.push(encode(item));
      for (const item of also?.items ?? []) argv.push(encode(item));
      return (await script("appendOnce", APPEND_ONCE, keys, argv)) === 1;
    },
    rateWindow: async (key, op) =>
      Number(await script("rateWindow", RATE_WINDOW, [k(key)], rateWindowArgs(op))),
    takeToken: async (key, limits) =>
      Number(
        await script(
          "takeToken",
          TAKE_TOKEN,
          [k(key)],
          [String(limits.perMinute), String(limits.burst), "take"],
        ),
      ),
    returnToken: async (key, limits) => {
      await script(
        "returnToken",
        TAKE_TOKEN,
        [k(key)],
        [String(limits.perMinute), String(limits.burst), "return"],
      );
    },
    incr: (key, by = 1) => send<number>("incr", k(key), ["INCRBY", k(key), String(by)]),
    incrAll: async (steps) => {
      if (steps.length === 0) return [];
      const keys: string[] = [];
      const argv: string[] = [];
      for (const s of steps) {
        keys.push(k(s.key));
        argv.push(String(s.by));
      }
      return ((await script("incrAll", INCR_ALL, keys, argv)) as unknown[]).map(Number);
    },
    append: async <T>(key: string, items: readonly T[], expiry?: Expiry, put?: Put) => {
      if (!expiry && !put) {
        if (items.length === 0) return send<number>("append", k(key), ["LLEN", k(key)]);
        const args = ["RPUSH", k(key)];
        for (const item of items) args.push(encode(item));
        return send<number>("append", args[1]!, args);
      }
      // One script: the push, the put and the TTLs of the keys that expire with it, together.
      const keys = [k(key)];
      for (const e of expiry?.keys ?? []) keys.push(k(e));
      if (put) keys.push(k(put.key));
      const argv = [
        expiry ? px(expiry.ttlMs) : "",
        put ? "1" : "0",
        put ? encode(put.value) : "",
        put?.ttlMs ? px(put.ttlMs) : "",
      ];
      for (const item of items) argv.push(encode(item));
      return Number(await script("append", APPEND, keys, argv));
    },
    batch: (async (steps: readonly StoreStep[]) => {
      if (steps.length === 0) return [];
      const keys: string[] = [];
      const argv: string[] = [];
      for (const s of steps) {
        keys.push(k(s.key));
        batchArgs(s, argv);
      }
      const res = (await script("batch", BATCH, keys, argv)) as Array<string | number | string[] | null>;
      return steps.map((s, i) => (i < res.length ? stepResult(s, res[i]!) : skipped(s)));
    }) as Store["batch"],
    range: async <T>(key: string, start: number, stop: number) =>
      (await send<string[]>("range", k(key), ["LRANGE", k(key), String(start), String(stop)])).map((s) =>
        decode<T>(s),
      ),
    length: (key) => send<number>("length", k(key), ["LLEN", k(key)]),
    dropFirst: async (key, count) => {
      const n = Math.max(0, Math.floor(count));
      if (n > 0) await send("dropFirst", k(key), ["LTRIM", k(key), String(n), "-1"]);
    },
    keys: async (keyPrefix) => {
      ready("keys");
      try {
        const keys = await link.scan(`${globEscape(k(keyPrefix))}*`);
        return [...new Set(keys.map((key) => key.slice(prefix.length)))].sort();
      } catch (err) {
        throw failure("keys", err);
      }
    },
    // Redis's AOF/RDB keep deleted values until the server rewrites them (docs/security.md).
    purge: async () => {},
    size: async () => {
      ready("size");
      try {
        const keys = new Set(await link.scan(`${globEscape(prefix)}*`)).size;
        return { keys, bytes: await link.usedMemory() };
      } catch (err) {
        throw failure("size", err);
      }
    },
    healthy: () => link.ready(),
    close: async () => {
      if (closed) return;
      closed = true;
      await link.close();
    },
  };
}

function isConnectionError(err: unknown): boolean {
  const e = err as { name?: string; code?: string; message?: string };
  return (
    e?.name === "ClientOfflineError" ||
    e?.name === "SocketClosedUnexpectedlyError" ||
    e?.name === "ClientClosedError" ||
    e?.code === "ECONNREFUSED" ||
    e?.code === "ECONNRESET" ||
    /not connected|offline|closed/i.test(e?.message ?? "")
  );
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(invalid url)";
  }
}
