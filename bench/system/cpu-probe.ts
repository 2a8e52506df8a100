/**
 * A quick probe for work on Neo's overhead (not part of `npm run bench`): N mentions one at a time to
 * Neo and to the bare Bolt app (bench/system/bare-bolt.ts), alternating, after 40 warm-up messages
 * each; prints CPU per message of both processes (user + system, /proc), their ratio, the Slack and
 * model calls made, CPU per message of the main thread and of the others, and the median handling
 * time (send → answered). ~20 s for N=100; figures vary ±10 % run to run on a shared machine.
 *
 *   npx tsx bench/system/cpu-probe.ts 100 [NEO_ENV=value ...]
 *   PROBE_PERF=1 BENCH_BOT_NODE_ARGS=--perf-basic-prof …   perf record of both: /tmp/perf-{neo,bare}.data
 *   PROBE_STRACE=1 …                                        strace -c of both: /tmp/strace-{neo,bare}.txt
 *   PROBE_STRACE_ARGS="-f -tt -e trace=read,writev" …       other strace options instead of -c -f
 *   PROBE_WIRE=0 …                                          Neo without the Redis counting wire (its hop adds latency)
 *   PROBE_IDLE=10 …                                         then idle 10 s: CPU ms per idle second of each
 *   PROBE_BURST=40 …                                        N messages in bursts of 40 (one per channel), wall = time to all
 *   PROBE_WARM=1000 …                                       warm-up messages per app (default 40): V8 keeps
 *                                                           compiling for the first ~1000, more of Neo's code
 */
import { mention, startPeers } from "./peers.js";
import { cpuMs } from "./procs.js";
import { settled } from "./redis-per-message.js";
import { startStack } from "./stack.js";

const N = Number(process.argv[2] ?? 100);
const extra = Object.fromEntries(process.argv.slice(3).map((a) => a.split("=") as [string, string]));
const CH = 40;
const chans = (l: string) => Array.from({ length: CH }, (_, i) => `CPRB${l}${String(i).padStart(3, "0")}`);
const stack = await startStack({
  latencyMs: 0,
  mcp: false,
  countRedis: process.env.PROBE_WIRE !== "0",
  slackChannels: ["N", "B"].flatMap(chans).map((id) => ({ id, name: id.toLowerCase() })),
});
await stack.startBot({ NEO_MAX_CONCURRENT_TURNS: "8", ...extra });
const peers = await startPeers(stack);
const apps = { neo: peers.apps.neo, bare: peers.apps.bare };
const last = new Map<string, number>();
let k = 0;
const one = async (a: "neo" | "bare", i: number) => {
  const ch = chans(a === "neo" ? "N" : "B")[i % CH]!;
  const wait = (last.get(ch) ?? 0) + 3000 - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const t = `pr${a[0]}${k++}`;
  const s = performance.now();
  await mention(stack, apps[a], t, ch);
  await stack.ledger.answered(t, 30_000);
  const took = performance.now() - s;
  last.set(ch, Date.now());
  if (a === "neo") await settled(stack);
  return took;
};
/** `k` mentions at once, one in each of the app's first `k` channels; the time until all are answered. */
const burst = async (a: "neo" | "bare", size: number) => {
  const cs = chans(a === "neo" ? "N" : "B").slice(0, size);
  const wait = Math.max(...cs.map((ch) => (last.get(ch) ?? 0) + 3000)) - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const ts = cs.map(() => `pr${a[0]}${k++}`);
  const s = performance.now();
  await Promise.all(cs.map((ch, i) => mention(stack, apps[a], ts[i]!, ch)));
  await Promise.all(ts.map((t) => stack.ledger.answered(t, 30_000)));
  const took = performance.now() - s;
  for (const ch of cs) last.set(ch, Date.now());
  if (a === "neo") await settled(stack);
  return took;
};
const BURST = Math.min(CH, Number(process.env.PROBE_BURST ?? 0));
const WARM = Number(process.env.PROBE_WARM ?? CH);
for (let i = 0; i < WARM; i++) for (const a of ["neo", "bare"] as const) await one(a, i);
const { spawn } = await import("node:child_process");
const tracers = process.env.PROBE_PERF
  ? (["neo", "bare"] as const).map((a) =>
      spawn("perf", ["record", "-F", "1999", "-p", String(apps[a].pid()), "-o", `/tmp/perf-${a}.data`], {
        stdio: "ignore",
      }),
    )
  : process.env.PROBE_STRACE
    ? (["neo", "bare"] as const).map((a) =>
        spawn("strace", [
          ...(process.env.PROBE_STRACE_ARGS ?? "-c -f").split(" "),
          "-p",
          String(apps[a].pid()),
          "-o",
          `/tmp/strace-${a}.txt`,
        ]),
      )
    : [];
if (tracers.length) await new Promise((r) => setTimeout(r, 1000));
/** The main thread's CPU (ms) apart from the other threads' (GC helpers, libuv's pool). */
const threads = (pid: number) => {
  const main = cpuMs(pid, pid);
  return { main, others: cpuMs(pid) - main };
};
const t0 = { neo: threads(apps.neo.pid()), bare: threads(apps.bare.pid()) };
const calls0 = stack.slack.calls.length;
const req0 = stack.model.ep.requests.length;
const c0 = { neo: cpuMs(apps.neo.pid()), bare: cpuMs(apps.bare.pid()) };
const times = { neo: [] as number[], bare: [] as number[] };
const QUARTERS = Number(process.env.PROBE_QUARTERS ?? 1);
const quarter: string[] = [];
for (let q = 0; q < QUARTERS; q++) {
  const q0 = { neo: cpuMs(apps.neo.pid()), bare: cpuMs(apps.bare.pid()) };
  const n = N / QUARTERS;
  for (let j = 0; j < n; j += BURST || 1) {
    const i = q * n + j;
    for (const a of (i / (BURST || 1)) % 2 ? (["neo", "bare"] as const) : (["bare", "neo"] as const))
      times[a].push(BURST ? await burst(a, BURST) : await one(a, WARM + i));
  }
  const dn = (cpuMs(apps.neo.pid()) - q0.neo) / n;
  const db = (cpuMs(apps.bare.pid()) - q0.bare) / n;
  quarter.push(`${dn.toFixed(1)}/${db.toFixed(1)}=${(dn / db).toFixed(2)}`);
}
if (QUARTERS > 1) console.log("per part (neo/bare=ratio):", quarter.join("  "));
const cpu = { neo: (cpuMs(apps.neo.pid()) - c0.neo) / N, bare: (cpuMs(apps.bare.pid()) - c0.bare) / N };
for (const t of tracers) t.kill("SIGINT");
if (tracers.length) await new Promise((r) => setTimeout(r, 1000));
const cc: Record<string, number> = {};
for (const c of stack.slack.calls.slice(calls0)) cc[c.method] = (cc[c.method] ?? 0) + 1;
const purposes: Record<string, number> = {};
for (const q of stack.model.ep.requests.slice(req0))
  purposes[String(q.purpose)] = (purposes[String(q.purpose)] ?? 0) + 1;
console.log(
  "slack calls (both apps)",
  JSON.stringify(cc),
  "model requests by purpose",
  JSON.stringify(purposes),
);
for (const a of ["neo", "bare"] as const) {
  const t1 = threads(apps[a].pid());
  const per = (k: "main" | "others") => ((t1[k] - t0[a][k]) / N).toFixed(2);
  console.log(`${a} CPU ms per message: main thread ${per("main")}, other threads ${per("others")}`);
}
const IDLE = Number(process.env.PROBE_IDLE ?? 0);
if (IDLE) {
  const i0 = { neo: cpuMs(apps.neo.pid()), bare: cpuMs(apps.bare.pid()) };
  await new Promise((r) => setTimeout(r, IDLE * 1000));
  const rate = (a: "neo" | "bare") => ((cpuMs(apps[a].pid()) - i0[a]) / IDLE).toFixed(1);
  console.log(`idle ${IDLE} s after the run: CPU ms per second neo ${rate("neo")} bare ${rate("bare")}`);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(
  JSON.stringify(extra),
  `cpu/msg neo ${cpu.neo.toFixed(2)} bare ${cpu.bare.toFixed(2)} ratio ${(cpu.neo / cpu.bare).toFixed(2)} | wall med neo ${med(times.neo).toFixed(1)} bare ${med(times.bare).toFixed(1)}`,
);
await peers.close();
await stack.close();
process.exit(0);
