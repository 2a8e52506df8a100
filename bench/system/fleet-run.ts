/**
 * `npm run bench:fleet`: the fleet bench (issue 31 item 5, see bench/system/fleet.ts). Three phases
 * with the same load: 1 Neo process on Redis (the per-user baseline), 3 on one Redis, 3 on a local
 * 3-primary Redis Cluster, the 3-process ones with an instance SIGKILLed mid-run and restarted.
 * Sizes from the environment (defaults in brackets): FLEET_MESSAGES [600], FLEET_CHANNELS [150],
 * FLEET_USERS [50], FLEET_SEND_SECONDS [60]; the full size is 2000 / 500 / 50.
 * Rewrites the fleet block of BENCHMARKS.md; exits 1 when a message was lost or answered twice.
 * Not part of `npm test`.
 */
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { type FleetResult, type FleetSpec, runFleetPhase } from "./fleet.js";
import { fleetFigures, fleetMarkdown } from "./fleet-report.js";
import { FLEET_END, FLEET_START } from "./markers.js";
import { cleanupNow, installCleanup } from "./procs.js";
import { machine, writeBlock } from "./report.js";

const BENCHMARKS = fileURLToPath(new URL("../../BENCHMARKS.md", import.meta.url));

const Sizes = z.object({
  FLEET_MESSAGES: z.coerce.number().int().min(1).default(600),
  FLEET_CHANNELS: z.coerce.number().int().min(2).default(150),
  FLEET_USERS: z.coerce.number().int().min(1).default(50),
  FLEET_SEND_SECONDS: z.coerce.number().min(1).default(60),
});

const log = (s: string) => process.stderr.write(`bench:fleet: ${s}\n`);

async function main(): Promise<number> {
  installCleanup();
  const sizes = Sizes.parse(process.env);
  const base: Omit<FleetSpec, "label" | "instances" | "store" | "kill" | "prefix"> = {
    messages: sizes.FLEET_MESSAGES,
    channels: sizes.FLEET_CHANNELS,
    users: sizes.FLEET_USERS,
    sendMs: sizes.FLEET_SEND_SECONDS * 1000,
    latencyMs: 200,
    turnsPerMinute: 6,
    turnBurst: 2,
    drainMs: 120_000,
  };
  const phases: FleetSpec[] = [
    { ...base, label: "1 process, Redis", instances: 1, store: "redis", kill: false, prefix: "fa" },
    {
      ...base,
      label: "3 processes, Redis, one killed",
      instances: 3,
      store: "redis",
      kill: true,
      prefix: "fb",
    },
    {
      ...base,
      label: "3 processes, Redis Cluster (3 primaries), one killed",
      instances: 3,
      store: "cluster",
      kill: true,
      prefix: "fc",
    },
  ];
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const results: FleetResult[] = [];
  for (const spec of phases) {
    log(`${spec.label}: ${spec.messages} messages over ${spec.channels} channels from ${spec.users} users`);
    const r = await runFleetPhase(spec);
    const f = fleetFigures(r);
    log(
      `${spec.label}: lost ${f.lost}, duplicated ${f.duplicated}, windows over a limit ${f.windowsOver}, p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms`,
    );
    results.push(r);
  }
  const cmd =
    sizes.FLEET_MESSAGES === 600 && sizes.FLEET_CHANNELS === 150 && sizes.FLEET_USERS === 50
      ? "npm run bench:fleet"
      : `FLEET_MESSAGES=${sizes.FLEET_MESSAGES} FLEET_CHANNELS=${sizes.FLEET_CHANNELS} FLEET_USERS=${sizes.FLEET_USERS} FLEET_SEND_SECONDS=${sizes.FLEET_SEND_SECONDS} npm run bench:fleet`;
  const body = fleetMarkdown(results, cmd, machine(loadAtStart), (Date.now() - started) / 1000);
  writeBlock(BENCHMARKS, body, FLEET_START, FLEET_END);
  process.stdout.write(`${body}\n`);
  const exact = results.every((r) => r.sent.every((s) => s.answers.length === 1));
  if (!exact) log("FAILED: a message was lost or answered more than once");
  return exact ? 0 : 1;
}

main().then(
  (code) => {
    cleanupNow();
    process.exit(code);
  },
  (e: unknown) => {
    log(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    cleanupNow();
    process.exit(1);
  },
);
