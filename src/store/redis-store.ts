/**
 * The Redis store. Plain get/set/delete go through keyv + `@keyv/redis` (namespace = prefix); the
 * atomic operations keyv cannot express (SET NX PX, GETDEL, compare-and-renew/delete, INCR, lists,
 * SCAN) use the same `@redis/client` connection directly, with the same JSON encoding (codec.ts).
 *
 * Failure policy: the client runs without an offline queue, so while Redis is unreachable every
 * operation rejects at once with `StoreUnavailableError` (nothing fails open, nothing hangs), and
 * `healthy()` is false. The client keeps reconnecting and the store recovers when Redis returns.
 */
import KeyvRedis, { createClient } from "@keyv/redis";
import { Keyv } from "keyv";
import { decode, encode, globEscape, keyvDeserialize, keyvSerialize } from "./codec.js";
import { wantedGrace } from "./rate-window.js";
import { type Expiry, type Store, type StoreLog, StoreUnavailableError } from "./types.js";

export interface RedisStoreOptions {
  url: string;
  /** Namespace for every key (e.g. `neo:`). */
  prefix: string;
  /** How long creation waits for the first connection before returning an unhealthy store. */
  connectWaitMs?: number;
  /** Where connection transitions are told (down, back, unreachable at start); none = not told. */
  log?: StoreLog;
}

type RedisClient = ReturnType<typeof createClient>;

// Compare-and-X scripts: values are compared as their exact JSON encoding.
const RENEW_IF_EQUALS = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const DELETE_IF_EQUALS = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) else return 0 end`;

// ARGV: 1 = "1" when a value is expected ("0" = must be absent), 2 = expected, 3 = next, 4 = TTL ms or "".
const COMPARE_AND_SET = `local cur = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if cur ~= ARGV[2] then return 0 end
elseif cur then return 0 end
if ARGV[4] ~= '' then redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
else redis.call('SET', KEYS[1], ARGV[3]) end
return 1`;

// KEYS: claim, list, marker, then the keys that expire together; ARGV: 1 = "1", 2 = claim TTL,
// 3 = their TTL ms or "", then the items.
const APPEND_ONCE = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  for i = 4, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
  redis.call('SET', KEYS[3], ARGV[1])
  if ARGV[3] ~= '' then
    for i = 4, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
  end
  return 1
end
return 0`;

/**
 * token-bucket.ts's takeToken on one hash (`tokens`, `at`), timed by the server's clock (TIME).
 * ARGV: 1 = per minute, 2 = burst. Returns 0 (taken) or the ms until a token is there. The key
 * expires once the bucket would be full again.
 */
const TAKE_TOKEN = `local perMs, burst = tonumber(ARGV[1]) / 60000, tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(v[1]) or burst, tonumber(v[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) * perMs)
  at = now
end
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.max(1, math.ceil((1 - tokens) / perMs)) end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / perMs) + 1000)
return wait`;

/**
 * rate-window.ts's steps on one sorted set: members are entry ids scored as rate-window.ts scores
 * them, plus `#block` and `#wanted` scored with the time they end. Timed by the server's clock
 * (TIME), so every host agrees. ARGV: 1 = op, 2 = window ms, 3 = id or block ms, 4 = limit,
 * 5 = hold ms or "", 6 = "1" when the take yields, 7 = wanted grace ms. Returns 0 (done) or the ms
 * to wait.
 */
const RATE_WINDOW = `local key = KEYS[1]
local op, windowMs = ARGV[1], tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
local function until_of(m)
  local v = redis.call('ZSCORE', key, m)
  if v then return tonumber(v) else return 0 end
end
local function keep(untilMs)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local ttl = untilMs - now
  if last[2] then ttl = math.max(ttl, tonumber(last[2]) + windowMs - now) end
  if ttl > 0 then redis.call('PEXPIRE', key, math.ceil(ttl) + 1000) end
  return 0
end
if op == 'release' then
  redis.call('ZREM', key, ARGV[3])
  return 0
end
if op == 'settle' then
  redis.call('ZADD', key, 'XX', now, ARGV[3])
  return keep(0)
end
local blocked = until_of('#block')
if op == 'block' then
  local u = math.max(blocked, now + tonumber(ARGV[3]))
  redis.call('ZADD', key, u, '#block')
  return keep(u)
end
if blocked > now then return math.ceil(blocked - now) end
local id, limit = ARGV[3], tonumber(ARGV[4])
if op == 'spend' and redis.call('ZSCORE', key, id) then
  redis.call('ZADD', key, now, id)
  return keep(0)
end
local yields = ARGV[6] == '1'
local wanted = until_of('#wanted')
if yields and wanted > now then return math.ceil(wanted - now) end
local all = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
local scores = {}
for i = 1, #all, 2 do
  if all[i] ~= '#block' and all[i] ~= '#wanted' then scores[#scores + 1] = tonumber(all[i + 1]) end
end
if #scores < limit then
  local score = now
  if ARGV[5] ~= '' then score = now + tonumber(ARGV[5]) - windowMs end
  redis.call('ZADD', key, score, id)
  return keep(0)
end
local wait = math.max(1, math.ceil(scores[#scores - limit + 1] + windowMs - now))
local wantedUntil = now + wait + tonumber(ARGV[7])
if not yields and wantedUntil > wanted then
  redis.call('ZADD', key, wantedUntil, '#wanted')
  keep(wantedUntil)
end
return wait`;

function reconnectDelay(attempt: number): number {
  return Math.min(100 * 2 ** attempt, 2000);
}

export async function createRedisStore(opts: RedisStoreOptions): Promise<Store> {
  const { prefix } = opts;
  const storeLog = opts.log;
  const client: RedisClient = createClient({
    url: opts.url,
    // Without an offline queue, commands issued while disconnected fail fast instead of hanging.
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: reconnectDelay },
  });
  let down = false;
  let closed = false;
  // node-redis (and keyv) crash the process on an unhandled 'error' event; log transitions once.
  client.on("error", (err: Error) => {
    if (!down) storeLog?.warn({ err: err.message }, "Redis unreachable; store unavailable until it returns");
    down = true;
  });
  client.on("ready", () => {
    if (down) storeLog?.info("Redis reachable again; store recovered");
    down = false;
  });

  const adapter = new KeyvRedis<unknown>(client, {
    namespace: prefix,
    keyPrefixSeparator: "",
    throwOnConnectError: true,
    throwOnErrors: true,
  });
  const keyv = new Keyv<unknown>({
    store: adapter,
    namespace: prefix,
    useKeyPrefix: false,
    serialize: keyvSerialize,
    deserialize: keyvDeserialize,
    throwOnErrors: true,
  });
  keyv.on("error", () => {
    // Errors are rethrown to the caller (throwOnErrors) and translated below; the listener only
    // keeps an emitted error from becoming an uncaught exception.
  });

  const connecting = client.connect().catch((err: unknown) => {
    storeLog?.warn({ err: (err as Error).message }, "Redis connection failed");
  });
  const waitMs = opts.connectWaitMs ?? 2000;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([connecting, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
  clearTimeout(timer);
  if (!client.isReady) storeLog?.warn({ url: redact(opts.url) }, "Redis not reachable at start-up; retrying");

  const k = (key: string) => `${prefix}${key}`;

  /** Run a command; a failure while Redis is not ready becomes StoreUnavailableError. */
  async function run<R>(op: string, fn: () => Promise<R>): Promise<R> {
    if (!client.isReady) throw new StoreUnavailableError(`store unavailable: Redis is unreachable (${op})`);
    try {
      return await fn();
    } catch (err) {
      if (!client.isReady || isConnectionError(err)) {
        throw new StoreUnavailableError(`store unavailable: ${(err as Error).message} (${op})`, {
          cause: err,
        });
      }
      throw err;
    }
  }

  return {
    kind: "redis",
    get: <T>(key: string) => run("get", async () => (await keyv.get(key)) as T | undefined),
    set: <T>(key: string, value: T, ttlMs?: number) =>
      run("set", async () => {
        await keyv.set(key, value, ttlMs);
      }),
    delete: (key) => run("delete", () => keyv.delete(key)),
    setIfAbsent: <T>(key: string, value: T, ttlMs?: number) =>
      run("setIfAbsent", async () => {
        const options = ttlMs
          ? { condition: "NX" as const, expiration: { type: "PX" as const, value: ttlMs } }
          : { condition: "NX" as const };
        return (await client.set(k(key), encode(value), options)) === "OK";
      }),
    take: <T>(key: string) =>
      run("take", async () => {
        const raw = await client.getDel(k(key));
        return raw === null ? undefined : decode<T>(raw);
      }),
    renewIfEquals: <T>(key: string, value: T, ttlMs: number) =>
      run("renewIfEquals", async () => {
        const res = await client.eval(RENEW_IF_EQUALS, {
          keys: [k(key)],
          arguments: [encode(value), String(ttlMs)],
        });
        return res === 1;
      }),
    deleteIfEquals: <T>(key: string, value: T) =>
      run("deleteIfEquals", async () => {
        const res = await client.eval(DELETE_IF_EQUALS, { keys: [k(key)], arguments: [encode(value)] });
        return res === 1;
      }),
    compareAndSet: <T>(key: string, expected: T | undefined, next: T, ttlMs?: number) =>
      run("compareAndSet", async () => {
        const res = await client.eval(COMPARE_AND_SET, {
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
    ) =>
      run("appendOnce", async () => {
        const res = await client.eval(APPEND_ONCE, {
          keys: [k(claimKey), k(listKey), k(markerKey), ...(expiry?.keys ?? []).map(k)],
          arguments: [
            encode(1),
            String(claimTtlMs),
            expiry ? String(Math.max(1, Math.round(expiry.ttlMs))) : "",
            ...items.map(encode),
          ],
        });
        return res === 1;
      }),
    rateWindow: (key, op) =>
      run("rateWindow", async () => {
        const args =
          op.op === "block"
            ? [op.op, String(op.windowMs), String(op.ms), "0", "", "0", "0"]
            : op.op === "release" || op.op === "settle"
              ? [op.op, String(op.windowMs), op.id, "0", "", "0", "0"]
              : [
                  op.op,
                  String(op.windowMs),
                  op.id,
                  String(op.limit),
                  op.op === "take" && op.holdMs !== undefined ? String(op.holdMs) : "",
                  op.op === "take" && op.yields ? "1" : "0",
                  String(wantedGrace(op)),
                ];
        return Number(await client.eval(RATE_WINDOW, { keys: [k(key)], arguments: args }));
      }),
    takeToken: (key, limits) =>
      run("takeToken", async () =>
        Number(
          await client.eval(TAKE_TOKEN, {
            keys: [k(key)],
            arguments: [String(limits.perMinute), String(limits.burst)],
          }),
        ),
      ),
    incr: (key, by = 1) => run("incr", () => client.incrBy(k(key), by)),
    append: <T>(key: string, items: readonly T[], expiry?: Expiry) =>
      run("append", async () => {
        if (!expiry)
          return items.length === 0 ? client.lLen(k(key)) : client.rPush(k(key), items.map(encode));
        // One MULTI: the push and the TTLs of the keys that expire with it are applied together.
        const tx = client.multi();
        if (items.length === 0) tx.lLen(k(key));
        else tx.rPush(k(key), items.map(encode));
        const ttl = Math.max(1, Math.round(expiry.ttlMs));
        for (const key2 of expiry.keys) tx.pExpire(k(key2), ttl);
        const [length] = await tx.exec();
        return Number(length);
      }),
    range: <T>(key: string, start: number, stop: number) =>
      run("range", async () => (await client.lRange(k(key), start, stop)).map((s) => decode<T>(s))),
    length: (key) => run("length", () => client.lLen(k(key))),
    dropFirst: (key, count) =>
      run("dropFirst", async () => {
        const n = Math.max(0, Math.floor(count));
        if (n > 0) await client.lTrim(k(key), n, -1);
      }),
    keys: (keyPrefix) =>
      run("keys", async () => {
        const out: string[] = [];
        const match = `${globEscape(k(keyPrefix))}*`;
        let cursor = "0";
        do {
          const page = await client.scan(cursor, { MATCH: match, COUNT: 500 });
          cursor = String(page.cursor);
          for (const key of page.keys) out.push(String(key).slice(prefix.length));
        } while (cursor !== "0");
        return [...new Set(out)].sort();
      }),
    // Redis's AOF/RDB keep deleted values until the server rewrites them (docs/security.md).
    purge: async () => {},
    size: () =>
      run("size", async () => {
        let keys = 0;
        let cursor = "0";
        do {
          const page = await client.scan(cursor, { MATCH: `${globEscape(prefix)}*`, COUNT: 1000 });
          cursor = String(page.cursor);
          keys += page.keys.length;
        } while (cursor !== "0");
        const info = await client.info("memory");
        const bytes = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
        return { keys, bytes };
      }),
    healthy: () => client.isReady,
    close: async () => {
      if (closed) return;
      closed = true;
      if (client.isReady) await client.close();
      else if (client.isOpen) client.destroy();
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
