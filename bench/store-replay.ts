/**
 * The store's CPU per message under the cpu-probe's traffic (bench/system/cpu-probe.ts): the store
 * operations one answered one-at-a-time mention makes, as the round-trips test sees them
 * (test/slack/round-trips.test.ts), with the same keys and values' shapes, over the local Redis,
 * one message at a time across 40 channels (a new thread each). Per message: the five cached reads
 * (channel settings twice, deny list, the user's and the channel's directory entries), the journal's
 * claim, the lease, the snapshot, the memory view's read, the user's turn token, the opening log
 * write, the usage counts, the post's room and its settling, the answer's write that ends the turn
 * and lets go of the lease, the memory turn's append and the write-back's read. Prints CPU µs per
 * message of this process (the store, its Redis client and the socket's syscalls), all of it and
 * the cached reads alone: an A/B figure for src/store work, steadier than a profile of the bot.
 *
 *   npx tsx bench/store-replay.ts [messages=2000] [warm-up=1000]
 */
import { randomUUID } from "node:crypto";
import { createStore } from "../src/store/create-store.js";
import type { StoreStep } from "../src/store/types.js";
import { probeRedis, uniquePrefix } from "../test/support/redis.js";

const N = Number(process.argv[2] ?? 2000);
const WARM = Number(process.argv[3] ?? 1000);
const CHANNELS = 40;
// Short-lived keys: whatever the clean-up at the end misses expires on its own.
const TTL = 600_000;
const redis = await probeRedis();
if (!redis.ok) throw new Error(`no Redis: ${redis.reason}`);
const store = await createStore({
  redisUrl: redis.url,
  dataDir: "unused",
  prefix: uniquePrefix("store-replay"),
});

const team = "TBENCH";
const userKey = `slack:${team}:UBENCH`;
const place = { kind: "public", workspace: team } as const;
const speaker = { userKey, displayName: "Bench" };
const cortex = (s: string) => `cortex:{${userKey}}:${s}`;
// The cached families' values, as the app writes them (settings, directory entries).
for (let ch = 0; ch < CHANNELS; ch++) {
  await store.set(`channel:settings:slack:${team}:C${ch}`, {
    persona: "terse",
    tools: ["search"],
    memory: true,
  });
  await store.set(`directory:channel:slack:${team}:C${ch}`, { kind: "public", name: `chan-${ch}` });
}
await store.set(`directory:user:${userKey}`, { name: "Bench", tz: "Europe/Paris", admin: false });
let turns = 0;

const usageSteps = (scope: string, tok: number) =>
  [`2026-11-29`, `2026-11`].flatMap((period) => [
    { key: `usage:tok:${period}:{${scope}}`, by: tok },
    { key: `usage:ptok:${period}:{${scope}}`, by: tok - 3 },
    { key: `usage:calls:${period}:{${scope}}`, by: 1 },
  ]);

const memoryRead = (): StoreStep[] => [
  { op: "get", key: cortex("version") },
  { op: "get", key: cortex("epoch") },
  { op: "range", key: cortex("records"), start: 0, stop: 0 },
  { op: "range", key: cortex("turns"), start: 0, stop: 0 },
  { op: "range", key: cortex("records"), start: 0, stop: -1 },
  { op: "range", key: cortex("turns"), start: Math.max(0, turns - 1), stop: -1 },
];

async function message(i: number): Promise<number> {
  const ch = `C${i % CHANNELS}`;
  const ts = `1690000000.${String(i).padStart(6, "0")}`;
  const conv = `slack:${team}:${ch}:${ts}`;
  const K = (s: string) => `conv:${s}:{${conv}}`;
  const expiry = { keys: [K("inbox"), K("log"), K("pending"), K("speakers")], ttlMs: TTL };
  const logSteps = (items: unknown[]): StoreStep[] => [
    { op: "append", key: K("log"), items },
    ...expiry.keys.map((key): StoreStep => ({ op: "expire", key, ttlMs: TTL })),
    { op: "set", key: K("existed"), value: 1, ttlMs: 2 * TTL },
  ];
  const id = `${team}/${ch}/${ts}`;
  const text = `what is the status? Q-prn${1000 + i}`;

  const c0 = process.cpuUsage();
  await Promise.all([
    store.get(`channel:settings:slack:${team}:${ch}`),
    store.get(`access:deny:{${userKey}}`),
    store.get(`directory:user:${userKey}`),
    store.get(`directory:channel:slack:${team}:${ch}`),
  ]);
  const cached = process.cpuUsage(c0);

  const inbound = {
    id,
    conversation: conv,
    speaker,
    text,
    shared: true,
    place,
    position: ts,
    receivedAt: Date.now(),
  };
  const lock = K("lock");
  const token = `bench#${randomUUID()}`;
  await Promise.all([
    store.appendOnce(`${K("seen")}:${id}`, 60_000, K("inbox"), [inbound], K("pending"), expiry, {
      key: K("speakers"),
      items: [userKey],
    }),
    store.setIfAbsent(lock, token, 5000),
    store.batch([
      { op: "length", key: K("log") },
      { op: "length", key: K("inbox") },
      { op: "range", key: K("inbox"), start: -32, stop: -1 },
      { op: "get", key: K("existed") },
    ]),
    store.batch(memoryRead()),
    store.takeToken(`rate:user:{${userKey}}`, { perMinute: 1_000_000, burst: 1_000_000 }),
  ]);
  const c1 = process.cpuUsage();
  await store.get(`channel:settings:slack:${team}:${ch}`);
  const c2 = process.cpuUsage(c1);
  await store.batch([
    ...logSteps([
      { type: "turn-start", from: 0, id, at: Date.now() },
      { type: "message", message: { role: "user", content: `Bench: ${text}`, speaker }, at: Date.now() },
    ]),
    { op: "length", key: K("inbox") },
    { op: "range", key: K("inbox"), start: 1, stop: -1 },
  ]);

  const answer = `ACK-prn${1000 + i}`;
  const rate = `rate:slack:${team}:chat.postMessage:${ch}`;
  const post = `${i}-bench`;
  await Promise.all([
    store.incrAll(usageSteps(userKey, 1120)),
    store.incrAll(usageSteps("*", 1120)),
    store.rateWindow(rate, { op: "take", id: post, limit: 1, windowMs: 44, holdMs: 60_000, yields: true }),
    store.batch([
      ...logSteps([{ type: "message", message: { role: "assistant", content: answer }, at: Date.now() }]),
      { op: "length", key: K("inbox") },
      { op: "range", key: K("inbox"), start: 1, stop: -1 },
      { op: "onlyIfLength", key: K("inbox"), length: 1 },
      { op: "take", key: K("pending") },
      { op: "deleteIfEquals", key: lock, value: token },
    ]),
  ]);
  await store.rateWindow(rate, { op: "settle", id: post, windowMs: 44 });
  const turn = {
    id: randomUUID(),
    at: Date.now(),
    conversation: conv,
    user: `Bench: ${text}`,
    assistant: answer,
    learned: place,
  };
  turns = await store.append(cortex("turns"), [turn], undefined, {
    key: cortex("version"),
    value: randomUUID(),
  });
  await store.batch(memoryRead());
  const all = process.cpuUsage(c0);
  if (i >= WARM) {
    cpu.all += all.user + all.system;
    cpu.system += all.system;
    cpu.cached += cached.user + cached.system + c2.user + c2.system;
  }
  return 0;
}

const cpu = { all: 0, system: 0, cached: 0 };
let started = 0;
for (let i = 0; i < WARM + N; i++) {
  if (i === WARM) started = performance.now();
  await message(i);
}
// For a profile of this process (--cpu-prof): the measured messages' span, from the process's start.
if (process.env.REPLAY_SPAN)
  console.log(`measured ${(started / 1e3).toFixed(2)}-${(performance.now() / 1e3).toFixed(2)} s`);
console.log(
  `CPU per message: ${(cpu.all / N).toFixed(0)} µs (${(cpu.system / N).toFixed(0)} µs system), of which the 5 cached reads ${(cpu.cached / N).toFixed(0)} µs`,
);
const keys = await store.keys("");
for (let j = 0; j < keys.length; j += 200)
  await Promise.all(keys.slice(j, j + 200).map((k) => store.delete(k)));
await store.close();
