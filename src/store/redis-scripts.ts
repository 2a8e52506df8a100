/**
 * The Lua scripts behind the Redis store's atomic operations. Each touches only the keys it is
 * given, and callers pass keys of one hash slot (src/core/keys.ts hash-tags them), so every script
 * also runs on a Redis Cluster.
 */
import { decode, encode } from "./codec.js";
import { type RateWindowOp, wantedGrace } from "./rate-window.js";
import type { StoreStep } from "./types.js";

// Compare-and-X scripts: values are compared as their exact JSON encoding.
export const RENEW_IF_EQUALS = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
export const DELETE_IF_EQUALS = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) else return 0 end`;

// ARGV: 1 = "1" when a value is expected ("0" = must be absent), 2 = expected, 3 = next, 4 = TTL ms or "".
export const COMPARE_AND_SET = `local cur = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if cur ~= ARGV[2] then return 0 end
elseif cur then return 0 end
if ARGV[4] ~= '' then redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
else redis.call('SET', KEYS[1], ARGV[3]) end
return 1`;

// KEYS: claim, list, marker, the second list if any, then the keys that expire together; ARGV:
// 1 = "1", 2 = claim TTL, 3 = their TTL ms or "", 4 = how many items the list gets, 5 = "1" when
// there is a second list, then the list's items, then the second list's.
export const APPEND_ONCE = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local n = tonumber(ARGV[4])
  for i = 6, 5 + n do redis.call('RPUSH', KEYS[2], ARGV[i]) end
  local first = 4
  if ARGV[5] == '1' then
    for i = 6 + n, #ARGV do redis.call('RPUSH', KEYS[4], ARGV[i]) end
    first = 5
  end
  redis.call('SET', KEYS[3], ARGV[1])
  if ARGV[3] ~= '' then
    for i = first, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
  end
  return 1
end
return 0`;

// KEYS: list, then the keys that expire together, then the put key if any; ARGV: 1 = their TTL ms
// or "", 2 = "1" when a value is put, 3 = its value, 4 = its TTL ms or "", then the items. Returns
// the list's length.
export const APPEND = `local n = 0
for i = 5, #ARGV do n = redis.call('RPUSH', KEYS[1], ARGV[i]) end
if #ARGV < 5 then n = redis.call('LLEN', KEYS[1]) end
local last = #KEYS
if ARGV[2] == '1' then
  if ARGV[4] ~= '' then redis.call('SET', KEYS[last], ARGV[3], 'PX', ARGV[4])
  else redis.call('SET', KEYS[last], ARGV[3]) end
  last = last - 1
end
if ARGV[1] ~= '' then
  for i = 2, last do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
end
return n`;

// Store.batch: one step per key, in order; ARGV: per key its op (g = GET, l = LLEN, r = LRANGE,
// t = GETDEL, d = delete if equal, a = RPUSH, x = PEXPIRE, s = SET, w = go on only if the list's
// LLEN is), then for r its start and stop, for d the value, for a the item count and the items
// (none: its LLEN), for x the TTL ms, for s the value and its TTL ms or "", for w the length. A
// missing value comes back as nil (false in the table); x and s give 0, w 1 or 0 (0 ends the batch:
// the steps after it are not in the reply).
export const BATCH = `local out, a = {}, 1
for i = 1, #KEYS do
  local op = ARGV[a]
  if op == 'g' then out[i] = redis.call('GET', KEYS[i]); a = a + 1
  elseif op == 'l' then out[i] = redis.call('LLEN', KEYS[i]); a = a + 1
  elseif op == 't' then out[i] = redis.call('GETDEL', KEYS[i]); a = a + 1
  elseif op == 'd' then
    if redis.call('GET', KEYS[i]) == ARGV[a + 1] then out[i] = redis.call('DEL', KEYS[i]) else out[i] = 0 end
    a = a + 2
  elseif op == 'a' then
    local n = tonumber(ARGV[a + 1])
    if n == 0 then out[i] = redis.call('LLEN', KEYS[i]) end
    for j = a + 2, a + 1 + n do out[i] = redis.call('RPUSH', KEYS[i], ARGV[j]) end
    a = a + 2 + n
  elseif op == 'x' then redis.call('PEXPIRE', KEYS[i], ARGV[a + 1]); out[i] = 0; a = a + 2
  elseif op == 's' then
    if ARGV[a + 2] ~= '' then redis.call('SET', KEYS[i], ARGV[a + 1], 'PX', ARGV[a + 2])
    else redis.call('SET', KEYS[i], ARGV[a + 1]) end
    out[i] = 0; a = a + 3
  elseif op == 'w' then
    if redis.call('LLEN', KEYS[i]) ~= tonumber(ARGV[a + 1]) then out[i] = 0; return out end
    out[i] = 1; a = a + 2
  else out[i] = redis.call('LRANGE', KEYS[i], ARGV[a + 1], ARGV[a + 2]); a = a + 3 end
end
return out`;

// ARGV[i]: what to add to KEYS[i]. Returns the new values.
export const INCR_ALL = `local out = {}
for i = 1, #KEYS do out[i] = redis.call('INCRBY', KEYS[i], ARGV[i]) end
return out`;

/**
 * token-bucket.ts's takeToken (ARGV[3] = "take") or returnToken ("return") on one hash (`tokens`,
 * `at`), timed by the server's clock (TIME). ARGV: 1 = per minute, 2 = burst. Returns 0 (taken or
 * returned) or the ms until a token is there. The key expires once the bucket would be full again.
 */
export const TAKE_TOKEN = `local perMs, burst = tonumber(ARGV[1]) / 60000, tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(v[1]) or burst, tonumber(v[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) * perMs)
  at = now
end
local wait = 0
if ARGV[3] == 'return' then tokens = math.min(burst, tokens + 1)
elseif tokens >= 1 then tokens = tokens - 1
else wait = math.max(1, math.ceil((1 - tokens) / perMs)) end
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
export const RATE_WINDOW = `local key = KEYS[1]
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

/** RATE_WINDOW's ARGV for one operation. */
export function rateWindowArgs(op: RateWindowOp): string[] {
  if (op.op === "block") return [op.op, String(op.windowMs), String(op.ms), "0", "", "0", "0"];
  if (op.op === "release" || op.op === "settle")
    return [op.op, String(op.windowMs), op.id, "0", "", "0", "0"];
  return [
    op.op,
    String(op.windowMs),
    op.id,
    String(op.limit),
    op.op === "take" && op.holdMs !== undefined ? String(op.holdMs) : "",
    op.op === "take" && op.yields ? "1" : "0",
    String(wantedGrace(op)),
  ];
}

/** The JSON of 1: APPEND_ONCE's claim, written on every message. */
export const ONE = encode(1);

/** One step's part of BATCH's reply, as `Store.batch` answers it. */
export function stepResult(s: StoreStep, v: string | number | string[] | null): unknown {
  if (s.op === "length" || s.op === "append") return Number(v);
  if (s.op === "deleteIfEquals" || s.op === "onlyIfLength") return v === 1;
  if (s.op === "expire" || s.op === "set") return undefined;
  if (s.op === "range") return (v as string[]).map((t) => decode<unknown>(t));
  return typeof v === "string" ? decode<unknown>(v) : undefined;
}

/** BATCH's ARGV for one step, pushed onto `argv`. */
export function batchArgs(s: StoreStep, argv: string[]): void {
  if (s.op === "range") argv.push("r", String(s.start), String(s.stop));
  else if (s.op === "deleteIfEquals") argv.push("d", encode(s.value));
  else if (s.op === "append") {
    argv.push("a", String(s.items.length));
    for (const item of s.items) argv.push(encode(item));
  } else if (s.op === "expire") argv.push("x", String(Math.max(1, Math.round(s.ttlMs))));
  else if (s.op === "set")
    argv.push("s", encode(s.value), s.ttlMs ? String(Math.max(1, Math.round(s.ttlMs))) : "");
  else if (s.op === "onlyIfLength") argv.push("w", String(s.length));
  else argv.push(s.op === "get" ? "g" : s.op === "length" ? "l" : "t");
}
