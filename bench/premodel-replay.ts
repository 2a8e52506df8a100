/**
 * Neo's CPU from a Slack event to its model request, in one process: the real Bolt app in HTTP mode,
 * the conversations layer, memory, loop and openai SDK (test/slack/support/harness.ts) over the local
 * Redis, against the fake Slack and the scripted endpoint. Mentions one at a time from one user
 * across 40 channels (each a new thread, as bench/system/cpu-probe.ts sends them). Per message: this
 * process's CPU from signing the event to the endpoint receiving the turn's request (the sender's
 * and the endpoint's share is the same before and after a change), and the whole message's, until
 * posted; the wall time from the event to the request; and the run's CPU per message (with what
 * happens between messages). Medians and quartiles: an A/B figure for work on the path to the
 * model request, steadier than a profile of the bot on a loaded machine.
 *
 *   npx tsx bench/premodel-replay.ts [messages=1500] [warm-up=1000]
 */

import { envelope, mention, startHarness, until } from "../test/slack/support/harness.js";
import { probeRedis, uniquePrefix } from "../test/support/redis.js";
import type { ScriptedRequest } from "../test/support/scripted-openai.js";

const N = Number(process.argv[2] ?? 1500);
const WARM = Number(process.argv[3] ?? 1000);
const CHANNELS = 40;
const redis = await probeRedis();
if (!redis.ok) throw new Error(`no Redis: ${redis.reason}`);
const channels = Array.from({ length: CHANNELS }, (_, i) => ({ id: `CPRE${i}`, name: `pre-${i}` }));
const h = await startHarness({
  memory: true,
  redis: { url: redis.url, prefix: uniquePrefix("premodel-replay") },
  channels,
});

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
let arrivedCpu = 0;
let arrivedAt = 0;
h.ep.fallback((req: ScriptedRequest) => {
  if (req.purpose === "turn") {
    arrivedCpu = cpuUs();
    arrivedAt = performance.now();
    return { text: `ACK ${req.index}` };
  }
  return { text: JSON.stringify({ conversations: [] }) };
});

let posted = 0;
let polling = 0;
const postsNow = () => h.fake.callsTo("chat.postMessage").length;
async function message(i: number): Promise<[number, number, number]> {
  const ch = channels[i % CHANNELS]!.id;
  arrivedCpu = 0;
  const before = posted;
  const sentAt = performance.now();
  const c0 = cpuUs();
  const res = await h.slack.event(envelope(mention(ch, "UANN", `what is the status? Q-prn${1000 + i}`)));
  if (res.status !== 200) throw new Error(`event answered ${res.status}`);
  await until("posted", () => postsNow() > before, 30_000);
  posted = postsNow();
  const c1 = cpuUs();
  // Not counted: the poll walks every thread held (thousands, none evicted within the run).
  await until("idle", () => h.conversations.stats().running === 0, 30_000);
  polling += cpuUs() - c1;
  if (!arrivedCpu) throw new Error("no model request seen");
  return [arrivedCpu - c0, c1 - c0, (arrivedAt - sentAt) * 1000];
}

for (let i = 0; i < WARM; i++) await message(i);
const pre: number[] = [];
const all: number[] = [];
const wall: number[] = [];
const t0 = cpuUs();
polling = 0;
for (let i = 0; i < N; i++) {
  const [a, b, w] = await message(WARM + i);
  pre.push(a);
  all.push(b);
  wall.push(w);
}
// Everything the process did over the run, per message: work that lands between messages too
// (timers that fire later, write-backs).
const perMessage = (cpuUs() - t0 - polling) / N;
const q = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * f)]!;
const fmt = (xs: number[]) =>
  `median ${q(xs, 0.5).toFixed(0)} µs (quartiles ${q(xs, 0.25).toFixed(0)}-${q(xs, 0.75).toFixed(0)})`;
console.log(
  `${N} messages after ${WARM}: event → model request ${fmt(pre)}, wall ${fmt(wall)}; whole message ${fmt(all)}; run CPU ${perMessage.toFixed(0)} µs per message`,
);
await h.close();
process.exit(0);
