/**
 * `npm run bench:fleet`: the fleet bench (issue 31 item 5, see bench/system/fleet.ts). For Slack,
 * then Discord, three phases with the same load: 1 Neo process on Redis (the per-user baseline), 3 on
 * one Redis, 3 on a local 3-primary Redis Cluster, the 3-process ones with an instance SIGKILLed
 * mid-run and restarted. Sizes from the environment (defaults in brackets): FLEET_MESSAGES [600],
 * FLEET_CHANNELS [150], FLEET_USERS [50], FLEET_SEND_SECONDS [60]; the full size is
 * 2000 / 500 / 50. FLEET_PLATFORMS [slack,discord] picks platforms; only a run of both rewrites the
 * fleet block of BENCHMARKS.md (a partial run prints it). Exits 1 when a message was lost or
 * answered twice. Not part of `npm test`.
 */
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  type FleetPlatformFactory,
  type FleetPlatformName,
  type FleetResult,
  type FleetSpec,
  runFleetPhase,
} from "./fleet.js";
import { createDiscordFleet } from "./fleet-discord.js";
import { fleetFigures, fleetMarkdown } from "./fleet-report.js";
import { createSlackFleet } from "./fleet-slack.js";
import { FLEET_END, FLEET_START } from "./markers.js";
import { runBenchMain } from "./procs.js";
import { machine, writeBlock } from "./report.js";

const BENCHMARKS = fileURLToPath(new URL("../../BENCHMARKS.md", import.meta.url));

const ALL: FleetPlatformName[] = ["slack", "discord"];
const FACTORY: Record<FleetPlatformName, FleetPlatformFactory> = {
  slack: createSlackFleet,
  discord: createDiscordFleet,
};

const Sizes = z.object({
  FLEET_MESSAGES: z.coerce.number().int().min(1).default(600),
  FLEET_CHANNELS: z.coerce.number().int().min(2).default(150),
  FLEET_USERS: z.coerce.number().int().min(1).default(50),
  FLEET_SEND_SECONDS: z.coerce.number().min(1).default(60),
  FLEET_PLATFORMS: z
    .string()
    .default(ALL.join(","))
    .transform((s) => s.split(",").map((p) => p.trim()))
    .pipe(z.array(z.enum(ALL)).min(1)),
});

const log = (s: string) => process.stderr.write(`bench:fleet: ${s}\n`);

/** The three phases of one platform; token prefixes unique per phase. */
function phases(
  platform: FleetPlatformName,
  base: Omit<FleetSpec, "label" | "platform" | "instances" | "store" | "kill" | "prefix">,
): FleetSpec[] {
  const p = platform === "slack" ? "f" : "d";
  const what = platform === "slack" ? "processes" : "processes (a shard each)";
  return [
    {
      ...base,
      platform,
      label: platform === "slack" ? "1 process, Redis" : "1 process (all 3 shards), Redis",
      instances: 1,
      store: "redis",
      kill: false,
      prefix: `${p}a`,
    },
    {
      ...base,
      platform,
      label: `3 ${what}, Redis, one killed`,
      instances: 3,
      store: "redis",
      kill: true,
      prefix: `${p}b`,
    },
    {
      ...base,
      platform,
      label: `3 ${what}, Redis Cluster (3 primaries), one killed`,
      instances: 3,
      store: "cluster",
      kill: true,
      prefix: `${p}c`,
    },
  ];
}

async function main(): Promise<number> {
  const sizes = Sizes.parse(process.env);
  const base = {
    messages: sizes.FLEET_MESSAGES,
    channels: sizes.FLEET_CHANNELS,
    users: sizes.FLEET_USERS,
    sendMs: sizes.FLEET_SEND_SECONDS * 1000,
    latencyMs: 200,
    turnsPerMinute: 6,
    turnBurst: 2,
    drainMs: 120_000,
  };
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const results: FleetResult[] = [];
  for (const spec of sizes.FLEET_PLATFORMS.flatMap((p) => phases(p, base))) {
    log(
      `${spec.platform}, ${spec.label}: ${spec.messages} messages over ${spec.channels} channels from ${spec.users} users`,
    );
    const r = await runFleetPhase(spec, FACTORY[spec.platform]);
    const f = fleetFigures(r);
    log(
      `${spec.platform}, ${spec.label}: lost ${f.lost}, duplicated ${f.duplicated}, windows over a limit ${f.windowsOver}, p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms`,
    );
    results.push(r);
  }
  const defaults = sizes.FLEET_MESSAGES === 600 && sizes.FLEET_CHANNELS === 150 && sizes.FLEET_USERS === 50;
  const cmd = defaults
    ? "npm run bench:fleet"
    : `FLEET_MESSAGES=${sizes.FLEET_MESSAGES} FLEET_CHANNELS=${sizes.FLEET_CHANNELS} FLEET_USERS=${sizes.FLEET_USERS} FLEET_SEND_SECONDS=${sizes.FLEET_SEND_SECONDS} npm run bench:fleet`;
  const body = fleetMarkdown(results, cmd, machine(loadAtStart), (Date.now() - started) / 1000);
  if (ALL.every((p) => sizes.FLEET_PLATFORMS.includes(p)))
    writeBlock(BENCHMARKS, body, FLEET_START, FLEET_END);
  process.stdout.write(`${body}\n`);
  const exact = results.every((r) => r.sent.every((s) => s.answers.length === 1));
  if (!exact) log("FAILED: a message was lost or answered more than once");
  return exact ? 0 : 1;
}

runBenchMain("bench:fleet", main);
