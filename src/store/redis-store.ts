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
  COMPARE_AND_SET,
  DELETE_IF_EQUALS,
  INCR_ALL,
  RATE_WINDOW,
  RENEW_IF_EQUALS,
  rateWindowArgs,
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

  /** Run one of redis-scripts.ts by its SHA-1; on NOSCRIPT, by its text (which loads it). */
  const script = async (text: string, args: { keys: string[]; arguments: string[] }) => {
    const sha = shaOf(text);
    try {
      return await link.commands().evalSha(sha, args);
    } catch (err) {
      if (!(err instanceof Error && err.message.startsWith("NOSCRIPT"))) throw err;
      return link.commands().eval(text, args);
    }
  };

  /** Run a command; a failure while Redis is not ready becomes StoreUnavailableError. */
  async function run<R>(op: string, fn: () => Promise<R>): Promise<R> {
    if (!link.ready()) {
      link.failed();
      throw new StoreUnavailableError(`store unavailable: Redis is unreachable (${op})`);
    }
    try {
      return await fn();
    } catch (err) {
      if (!link.ready() || isConnectionError(err)) {
        link.failed();
        throw new StoreUnavailableError(`store unavailable: ${(err as Error).message} (${op})`, {
          cause: err,
        });
      }
      throw err;
    }
  }

  return {
    kind: "redis",
    get: <T>(key: string) =>
      run("get", async () => {
        const raw = await link.commands().get(k(key));
        return raw === null ? undefined : decode<T>(raw);
      }),
    set: <T>(key: string, value: T, ttlMs?: number) =>
      run("set", async () => {
        const text = encode(value);
        await (ttlMs
          ? link.commands().set(k(key), text, { expiration: { type: "PX", value: ttlMs } })
          : link.commands().set(k(key), text));
      }),
    delete: (key) => run("delete", async () => (await link.commands().del(k(key))) > 0),
    setIfAbsent: <T>(key: string, value: T, ttlMs?: number) =>
      run("setIfAbsent", async () => {
        const options = ttlMs
          ? { condition: "NX" as const, expiration: { type: "PX" as const, value: ttlMs } }
          : { condition: "NX" as const };
        return (await link.commands().set(k(key), encode(value), options)) === "OK";
      }),
    take: <T>(key: string) =>
      run("take", async () => {
        const raw = await link.commands().getDel(k(key));
        return raw === null ? undefined : decode<T>(raw);
      }),
    renewIfEquals: <T>(key: string, value: T, ttlMs: number) =>
      run("renewIfEquals", async () => {
        const res = await script(RENEW_IF_EQUALS, {
          keys: [k(key)],
          arguments: [encode(value), String(ttlMs)],
        });
        return res === 1;
      }),
    deleteIfEquals: <T>(key: string, value: T) =>
      run("deleteIfEquals", async () => {
        const res = await script(DELETE_IF_EQUALS, { keys: [k(key)], arguments: [encode(value)] });
        return res === 1;
      }),
    compareAndSet: <T>(key: string, expected: T | undefined, next: T, ttlMs?: number) =>
      run("compareAndSet", async () => {
        const res = await script(COMPARE_AND_SET, {
          keys: [k(key)],
          arguments: [
            expected === undefined ? "0" : "1",
            expected === undefined ? "" : encode(expected),
            encode(next),
            ttlMs ? String(ttlMs) : "",
          ],
        });
        return res === 1;
      }),
    appendOnce: <T>(
      claimKey: string,
      claimTtlMs: number,
      listKey: string,
      items: readonly T[],
      markerKey: string,
      expiry?: Expiry,
      also?: ListItems,
    ) =>
      run("appendOnce", async () => {
        const res = await script(APPEND_ONCE, {
          keys: [
            k(claimKey),
            k(listKey),
            k(markerKey),
            ...(also ? [k(also.key)] : []),
            ...(expiry?.keys ?? []).map(k),
          ],
          arguments: [
            encode(1),
            String(claimTtlMs),
            expiry ? String(Math.max(1, Math.round(expiry.ttlMs))) : "",
            String(items.length),
            also ? "1" : "0",
            ...items.map(encode),
            ...(also?.items ?? []).map(encode),
          ],
        });
        return res === 1;
      }),
    rateWindow: (key, op) =>
      run("rateWindow", async () =>
        Number(await script(RATE_WINDOW, { keys: [k(key)], arguments: rateWindowArgs(op) })),
      ),
    takeToken: (key, limits) =>
      run("takeToken", async () =>
        Number(
          await script(TAKE_TOKEN, {
            keys: [k(key)],
            arguments: [String(limits.perMinute), String(limits.burst), "take"],
          }),
        ),
      ),
    returnToken: (key, limits) =>
      run("returnToken", async () => {
        await script(TAKE_TOKEN, {
          keys: [k(key)],
          arguments: [String(limits.perMinute), String(limits.burst), "return"],
        });
      }),
    incr: (key, by = 1) => run("incr", () => link.commands().incrBy(k(key), by)),
    incrAll: (steps) =>
      run("incrAll", async () => {
        if (steps.length === 0) return [];
        const res = await script(INCR_ALL, {
          keys: steps.map((s) => k(s.key)),
          arguments: steps.map((s) => String(s.by)),
        });
        return (res as unknown[]).map(Number);
      }),
    append: <T>(key: string, items: readonly T[], expiry?: Expiry, put?: Put) =>
      run("append", async () => {
        if (!expiry && !put)
          return items.length === 0
            ? link.commands().lLen(k(key))
            : link.commands().rPush(k(key), items.map(encode));
        // One script: the push, the put and the TTLs of the keys that expire with it, together.
        const res = await script(APPEND, {
          keys: [k(key), ...(expiry?.keys ?? []).map(k), ...(put ? [k(put.key)] : [])],
          arguments: [
            expiry ? String(Math.max(1, Math.round(expiry.ttlMs))) : "",
            put ? "1" : "0",
            put ? encode(put.value) : "",
            put?.ttlMs ? String(Math.max(1, Math.round(put.ttlMs))) : "",
            ...items.map(encode),
          ],
        });
        return Number(res);
      }),
    batch: ((steps: readonly StoreStep[]) =>
      run("batch", async () => {
        if (steps.length === 0) return [];
        const res = (await script(BATCH, {
          keys: steps.map((s) => k(s.key)),
          arguments: steps.flatMap(batchArgs),
        })) as Array<string | number | string[] | null>;
        return steps.map((s, i) => {
          if (i >= res.length) return skipped(s);
          const v = res[i];
          if (s.op === "length" || s.op === "append") return Number(v);
          if (s.op === "deleteIfEquals" || s.op === "onlyIfLength") return v === 1;
          if (s.op === "expire" || s.op === "set") return undefined;
          if (s.op === "range") return (v as string[]).map((t) => decode<unknown>(t));
          return typeof v === "string" ? decode<unknown>(v) : undefined;
        });
      })) as Store["batch"],
    range: <T>(key: string, start: number, stop: number) =>
      run("range", async () => (await link.commands().lRange(k(key), start, stop)).map((s) => decode<T>(s))),
    length: (key) => run("length", () => link.commands().lLen(k(key))),
    dropFirst: (key, count) =>
      run("dropFirst", async () => {
        const n = Math.max(0, Math.floor(count));
        if (n > 0) await link.commands().lTrim(k(key), n, -1);
      }),
    keys: (keyPrefix) =>
      run("keys", async () => {
        const keys = await link.scan(`${globEscape(k(keyPrefix))}*`);
        return [...new Set(keys.map((key) => key.slice(prefix.length)))].sort();
      }),
    // Redis's AOF/RDB keep deleted values until the server rewrites them (docs/security.md).
    purge: async () => {},
    size: () =>
      run("size", async () => {
        const keys = new Set(await link.scan(`${globEscape(prefix)}*`)).size;
        return { keys, bytes: await link.usedMemory() };
      }),
    healthy: () => link.ready(),
    close: async () => {
      if (closed) return;
      closed = true;
      await link.close();
    },
  };
}

/** BATCH's ARGV for one step. */
function batchArgs(s: StoreStep): string[] {
  if (s.op === "range") return ["r", String(s.start), String(s.stop)];
  if (s.op === "deleteIfEquals") return ["d", encode(s.value)];
  if (s.op === "append") return ["a", String(s.items.length), ...s.items.map(encode)];
  if (s.op === "expire") return ["x", String(Math.max(1, Math.round(s.ttlMs)))];
  if (s.op === "set") return ["s", encode(s.value), s.ttlMs ? String(Math.max(1, Math.round(s.ttlMs))) : ""];
  if (s.op === "onlyIfLength") return ["w", String(s.length)];
  return [{ get: "g", length: "l", take: "t" }[s.op]];
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
