/**
 * The embedded store: no server, one process. State lives in memory (a Map of encoded values and
 * lists) and every mutation is written to an op log (file-log.ts) before it resolves, so a new
 * instance over the same directory sees everything. Atomic operations are atomic because each one
 * runs to completion synchronously on the event loop. Plain get/set/delete go through keyv with a
 * small adapter over the same Map, like the Redis store.
 */
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { statSync } from "node:fs";
import { Keyv, type KeyvStoreAdapter } from "keyv";
import { decode, encode, keyvDeserialize, keyvSerialize } from "./codec.js";
import { type LogOp, type OpLog, openOpLog } from "./file-log.js";
import { createRateWindows } from "./rate-window.js";
import { createTokenBuckets } from "./token-bucket.js";
import { type Expiry, type ListItems, type Put, type Store, type StoreStep, skipped } from "./types.js";

export interface FileStoreOptions {
  dataDir: string;
  prefix: string;
  /** The clock expiry is read on (default `Date.now`): tests and the storage bench move it on. */
  now?: () => number;
}

/** A value or a list; `e` = when it expires (ms on the store's clock), none = never. */
type Entry = { t: "v"; s: string; e?: number } | { t: "l"; items: string[]; e?: number };

export class StoreTypeError extends Error {
  readonly code = "STORE_WRONG_TYPE";
}

/** Rewrite the log once it holds this many lines more than the live state needs. */
const COMPACT_SLACK = 10_000;

/**
 * Expired values are dropped from memory once this many keys are held (then twice what the last
 * purge left). Nothing else drops a value nobody reads again, and one is written with a TTL per
 * message (its dedupe claim): a long-running process would keep every claim it ever made.
 */
const PURGE_AT = 10_000;

/**
 * At least this often (on the store's clock, checked on writes and by a timer) the log is rewritten
 * when it holds anything dead: values that expired (a conversation past its retention) or were
 * deleted leave the file within this time, however quiet the store is.
 */
const REWRITE_EVERY_MS = 60 * 60 * 1000;

export async function createFileStore(opts: FileStoreOptions): Promise<Store> {
  const data = new Map<string, Entry>();
  const now = opts.now ?? (() => Date.now());
  let purgeAt = PURGE_AT;
  // Not logged: a rate window outlives no process, and one process is all the file store serves.
  const rateWindows = createRateWindows(now);
  const tokenBuckets = createTokenBuckets(now);

  const apply = (op: LogOp): void => {
    switch (op.o) {
      case "set":
        data.set(op.k, op.e === undefined ? { t: "v", s: op.v } : { t: "v", s: op.v, e: op.e });
        break;
      case "del":
        data.delete(op.k);
        break;
      case "exp": {
        const cur = data.get(op.k);
        if (cur) cur.e = op.e;
        break;
      }
      case "push": {
        const cur = data.get(op.k);
        if (cur?.t === "l") cur.items.push(...op.v);
        else data.set(op.k, { t: "l", items: [...op.v] });
        break;
      }
      case "trim": {
        const cur = data.get(op.k);
        if (cur?.t === "l") cur.items.splice(0, op.n);
        if (cur?.t === "l" && cur.items.length === 0) data.delete(op.k);
        break;
      }
    }
  };

  const log: OpLog = openOpLog(opts.dataDir, logName(opts.prefix), apply);
  let closed = false;

  /**
   * Drop expired values from memory. No op is logged: every read already takes them for absent, and
   * the log keeps their writes until it is rewritten (replayed, they are expired again).
   */
  const purgeExpired = (): void => {
    const t = now();
    for (const [k, entry] of data) if (entry.e !== undefined && entry.e <= t) data.delete(k);
  };

  function* snapshot(): Iterable<LogOp> {
    for (const [k, entry] of data) {
      if (entry.t === "l") {
        yield { o: "push", k, v: entry.items };
        if (entry.e !== undefined) yield { o: "exp", k, e: entry.e };
      } else if (entry.e === undefined) yield { o: "set", k, v: entry.s };
      else yield { o: "set", k, v: entry.s, e: entry.e };
    }
  }

  let rewrittenAt = now();
  const rewrite = (): void => {
    purgeExpired();
    log.rewrite(snapshot());
    rewrittenAt = now();
  };

  const compactIfBloated = () => {
    if (data.size >= purgeAt) {
      purgeExpired();
      purgeAt = Math.max(PURGE_AT, 2 * data.size);
    }
    if (log.lines > 2 * data.size + COMPACT_SLACK) rewrite();
    else if (now() - rewrittenAt >= REWRITE_EVERY_MS) {
      purgeExpired();
      // Only when the log holds more than the live state's lines (something dead is in it).
      let live = 0;
      for (const entry of data.values()) live += entry.t === "l" && entry.e !== undefined ? 2 : 1;
      if (log.lines > live) rewrite();
      else rewrittenAt = now();
    }
  };
  compactIfBloated();
  const timer = setInterval(() => {
    if (!closed) compactIfBloated();
  }, REWRITE_EVERY_MS);
  timer.unref();

  /** Mutate memory and log the op, in that order, synchronously. */
  const commit = (op: LogOp): void => {
    if (closed) throw new Error("file store is closed");
    apply(op);
    log.write(op);
    compactIfBloated();
  };

  /** The live entry at `key` (value or list), deleting it if expired. */
  const live = (key: string): Entry | undefined => {
    const entry = data.get(key);
    if (entry === undefined) return undefined;
    if (entry.e !== undefined && entry.e <= now()) {
      commit({ o: "del", k: key });
      return undefined;
    }
    return entry;
  };

  /** The live value entry at `key`, purging it if expired. */
  const liveValue = (key: string): { t: "v"; s: string; e?: number } | undefined => {
    const entry = live(key);
    if (entry !== undefined && entry.t !== "v")
      throw new StoreTypeError(`key "${key}" holds a list, not a value`);
    return entry;
  };

  const list = (key: string): string[] | undefined => {
    const entry = live(key);
    if (entry === undefined) return undefined;
    if (entry.t !== "l") throw new StoreTypeError(`key "${key}" holds a value, not a list`);
    return entry.items;
  };

  /** Give each live key of `expiry` its TTL (no await: part of the caller's atomic step). */
  const applyExpiry = (expiry: Expiry | undefined): void => {
    if (!expiry) return;
    const e = now() + expiry.ttlMs;
    for (const k of expiry.keys) if (live(k) !== undefined) commit({ o: "exp", k, e });
  };

  const setOp = (key: string, text: string, ttlMs?: number): LogOp =>
    ttlMs ? { o: "set", k: key, v: text, e: now() + ttlMs } : { o: "set", k: key, v: text };

  /** No await: part of the caller's atomic step. */
  const incrBy = (key: string, by: number): number => {
    const entry = liveValue(key);
    const current = entry === undefined ? 0 : decode<unknown>(entry.s);
    if (typeof current !== "number" || !Number.isInteger(current)) {
      throw new StoreTypeError(`key "${key}" does not hold an integer`);
    }
    const next = current + by;
    commit(
      entry?.e === undefined
        ? { o: "set", k: key, v: String(next) }
        : { o: "set", k: key, v: String(next), e: entry.e },
    );
    return next;
  };

  /** Items `start..stop` inclusive, encoded (Redis `LRANGE`'s indexes). */
  const rangeOf = (key: string, start: number, stop: number): string[] => {
    const items = list(key) ?? [];
    const n = items.length;
    const from = Math.max(start < 0 ? n + start : start, 0);
    const to = Math.min(stop < 0 ? n + stop : stop, n - 1);
    return from > to ? [] : items.slice(from, to + 1);
  };

  /** What a batch's writes put, encoded before any of them runs: a bad value writes nothing. */
  const encodedOf = (s: StoreStep): string[] =>
    s.op === "append" ? s.items.map(encode) : s.op === "set" ? [encode(s.value)] : [];

  /** `encoded`: `encodedOf(s)`. No await: part of the caller's atomic step. */
  const step = (s: StoreStep, encoded: string[] = encodedOf(s)): unknown => {
    if (s.op === "length") return list(s.key)?.length ?? 0;
    if (s.op === "onlyIfLength") return (list(s.key)?.length ?? 0) === s.length;
    if (s.op === "append") {
      const current = list(s.key);
      if (encoded.length === 0) return current?.length ?? 0;
      commit({ o: "push", k: s.key, v: encoded });
      return list(s.key)!.length;
    }
    if (s.op === "expire") {
      if (live(s.key) !== undefined) commit({ o: "exp", k: s.key, e: now() + s.ttlMs });
      return undefined;
    }
    if (s.op === "set") {
      commit(setOp(s.key, encoded[0]!, s.ttlMs));
      return undefined;
    }
    if (s.op === "range") return rangeOf(s.key, s.start, s.stop).map((t) => decode<unknown>(t));
    const entry = liveValue(s.key);
    if (s.op === "deleteIfEquals") {
      if (entry === undefined || entry.s !== encode(s.value)) return false;
      commit({ o: "del", k: s.key });
      return true;
    }
    if (entry !== undefined && s.op === "take") commit({ o: "del", k: s.key });
    return entry === undefined ? undefined : decode<unknown>(entry.s);
  };

  const adapter = createKeyvAdapter({
    get: (key) => liveValue(key)?.s,
    set: (key, text, ttlMs) => commit(setOp(key, text, ttlMs)),
    delete: (key) => {
      const had = live(key) !== undefined;
      if (had) commit({ o: "del", k: key });
      return had;
    },
  });
  const keyv = new Keyv<unknown>({
    store: adapter,
    useKeyPrefix: false,
    serialize: keyvSerialize,
    deserialize: keyvDeserialize,
    throwOnErrors: true,
  });
  keyv.on("error", () => {
    // Errors are rethrown to the caller (throwOnErrors); the listener keeps them from crashing.
  });

  return {
    kind: "file",
    get: async <T>(key: string) => (await keyv.get(key)) as T | undefined,
    set: async <T>(key: string, value: T, ttlMs?: number) => {
      await keyv.set(key, value, ttlMs);
    },
    delete: (key) => keyv.delete(key),
    setIfAbsent: async <T>(key: string, value: T, ttlMs?: number) => {
      if (live(key) !== undefined) return false;
      commit(setOp(key, encode(value), ttlMs));
      return true;
    },
    take: async <T>(key: string) => step({ op: "take", key }) as T | undefined,
    appendOnce: async <T>(
      claimKey: string,
      claimTtlMs: number,
      listKey: string,
      items: readonly T[],
      markerKey: string,
      expiry?: Expiry,
      also?: ListItems,
    ) => {
      // No await between the check and the writes: atomic within this process, which owns the file.
      if (live(claimKey) !== undefined) return false;
      const encoded = items.map(encode);
      const alsoEncoded = also?.items.map(encode) ?? [];
      commit(setOp(claimKey, encode(1), claimTtlMs));
      if (encoded.length > 0) {
        list(listKey);
        commit({ o: "push", k: listKey, v: encoded });
      }
      if (also && alsoEncoded.length > 0) {
        list(also.key);
        commit({ o: "push", k: also.key, v: alsoEncoded });
      }
      commit(setOp(markerKey, encode(1)));
      applyExpiry(expiry);
      return true;
    },
    renewIfEquals: async <T>(key: string, value: T, ttlMs: number) => {
      const entry = liveValue(key);
      if (entry === undefined || entry.s !== encode(value)) return false;
      commit({ o: "exp", k: key, e: now() + ttlMs });
      return true;
    },
    deleteIfEquals: async <T>(key: string, value: T) => step({ op: "deleteIfEquals", key, value }) as boolean,
    compareAndSet: async <T>(key: string, expected: T | undefined, next: T, ttlMs?: number) => {
      // Encode first (a bad value throws before anything is compared), then check and write with no
      // await in between: atomic within this process, which owns the file.
      const text = encode(next);
      const entry = liveValue(key);
      const holds = expected === undefined ? entry === undefined : entry?.s === encode(expected);
      if (!holds) return false;
      commit(setOp(key, text, ttlMs));
      return true;
    },
    rateWindow: async (key, op) => {
      if (closed) throw new Error("file store is closed");
      return rateWindows(key, op);
    },
    takeToken: async (key, limits) => {
      if (closed) throw new Error("file store is closed");
      return tokenBuckets.take(key, limits);
    },
    returnToken: async (key, limits) => {
      if (closed) throw new Error("file store is closed");
      tokenBuckets.giveBack(key, limits);
    },
    incr: async (key, by = 1) => incrBy(key, by),
    incrAll: async (steps) => steps.map((s) => incrBy(s.key, s.by)),
    append: async <T>(key: string, items: readonly T[], expiry?: Expiry, put?: Put) => {
      const text = put ? encode(put.value) : undefined;
      const current = list(key);
      if (items.length > 0) commit({ o: "push", k: key, v: items.map(encode) });
      if (put) commit(setOp(put.key, text!, put.ttlMs));
      applyExpiry(expiry);
      return items.length > 0 ? list(key)!.length : (current?.length ?? 0);
    },
    range: async <T>(key: string, start: number, stop: number) =>
      rangeOf(key, start, stop).map((s) => decode<T>(s)),
    batch: (async (steps: readonly StoreStep[]) => {
      const encoded = steps.map(encodedOf);
      let going = true;
      return steps.map((s, i) => {
        if (!going) return skipped(s);
        const out = step(s, encoded[i]);
        if (s.op === "onlyIfLength") going = out === true;
        return out;
      });
    }) as Store["batch"],
    length: async (key) => list(key)?.length ?? 0,
    dropFirst: async (key, count) => {
      const n = Math.min(Math.max(0, Math.floor(count)), list(key)?.length ?? 0);
      if (n > 0) commit({ o: "trim", k: key, n });
    },
    keys: async (keyPrefix) => {
      const t = now();
      const out: string[] = [];
      for (const [k, entry] of data) {
        if (!k.startsWith(keyPrefix)) continue;
        if (entry.e !== undefined && entry.e <= t) continue;
        out.push(k);
      }
      return out.sort();
    },
    purge: async () => {
      if (closed) throw new Error("file store is closed");
      rewrite();
    },
    size: async () => {
      const t = now();
      let keys = 0;
      for (const entry of data.values()) if (entry.e === undefined || entry.e > t) keys++;
      return { keys, bytes: statSync(log.path).size };
    },
    healthy: () => !closed,
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      log.close();
    },
  };
}

/** A file name per prefix: readable, and distinct even when sanitising collides. */
function logName(prefix: string): string {
  const readable = prefix.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 40) || "default";
  const hash = createHash("sha256").update(prefix).digest("hex").slice(0, 8);
  return `store-${readable}-${hash}`;
}

interface MapOps {
  get(key: string): string | undefined;
  set(key: string, text: string, ttlMs?: number): void;
  delete(key: string): boolean;
}

/** keyv storage adapter over the in-memory map (keyv hands it already-encoded text). */
function createKeyvAdapter(ops: MapOps): KeyvStoreAdapter {
  const emitter = new EventEmitter();
  const adapter: KeyvStoreAdapter = {
    opts: { dialect: "neo-file" },
    namespace: undefined,
    get: async (key) => ops.get(key) as never,
    set: async (key: string, value: unknown, ttl?: number) => {
      if (typeof value !== "string") throw new TypeError("file store expects encoded text from keyv");
      ops.set(key, value, ttl);
    },
    delete: async (key) => ops.delete(key),
    clear: async () => {
      throw new Error("clear() is not supported by the file store; delete keys explicitly");
    },
    on: (event, listener) => {
      emitter.on(event, listener);
      return adapter;
    },
  };
  return adapter;
}
