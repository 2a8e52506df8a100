/**
 * The fleet bench's figures and its block of BENCHMARKS.md: per phase, messages lost (never
 * answered) and duplicated (answered twice), windows over a platform limit, answer latency, and each
 * user's share — turns answered within the send window, per minute — against the single-process run
 * of the same platform. One section per platform, the same columns.
 */
import { percentiles } from "../types.js";
import type { FleetPlatformName, FleetResult, FleetSpec } from "./fleet.js";
import { ms } from "./report.js";

export interface FleetFigures {
  label: string;
  sent: number;
  answeredOnce: number;
  lost: number;
  duplicated: number;
  p50: number;
  p99: number;
  windowsOver: number;
  overCalls: number;
  /** Each user's answers within the send window, per minute. */
  perUser: Map<string, number>;
}

export function fleetFigures(r: FleetResult): FleetFigures {
  const windowEnd = r.loadStartedAt + r.spec.sendMs;
  const perUser = new Map<string, number>();
  for (const s of r.sent) {
    const user = r.userOf.get(s.token)!;
    const inWindow = s.answers.length > 0 && Math.min(...s.answers) <= windowEnd ? 1 : 0;
    perUser.set(user, (perUser.get(user) ?? 0) + inWindow / (r.spec.sendMs / 60_000));
  }
  const answered = r.sent.filter((s) => s.answers.length > 0);
  const lat = answered.length
    ? percentiles(answered.map((s) => Math.min(...s.answers) - s.sentAt))
    : { median: Number.NaN, p99: Number.NaN };
  return {
    label: r.spec.label,
    sent: r.sent.length,
    answeredOnce: r.sent.filter((s) => s.answers.length === 1).length,
    lost: r.sent.length - answered.length,
    duplicated: r.sent.filter((s) => s.answers.length > 1).length,
    p50: lat.median,
    p99: lat.p99,
    windowsOver: r.windowsOver,
    overCalls: Object.values(r.overLimit).reduce((a, b) => a + b, 0),
    perUser,
  };
}

/** |share / single-process share − 1| per user: median and worst, as percentages. */
export function shareDeviation(f: FleetFigures, single: FleetFigures): { median: number; worst: number } {
  const devs = [...single.perUser].map(([user, base]) =>
    base > 0 ? Math.abs((f.perUser.get(user) ?? 0) / base - 1) * 100 : Number.NaN,
  );
  const ok = devs.filter(Number.isFinite);
  return ok.length ? { median: percentiles(ok).median, worst: Math.max(...ok) } : { median: NaN, worst: NaN };
}

const pct = (x: number) => (Number.isFinite(x) ? `${x.toFixed(1)} %` : "—");

/** The bucket's most answers a minute over the send window, burst included. */
const bucketBound = (s: FleetSpec) =>
  (s.turnBurst + (s.turnsPerMinute * s.sendMs) / 60_000) / (s.sendMs / 60_000);

const PLATFORM: Record<FleetPlatformName, { name: string; setup: string[] }> = {
  slack: {
    name: "Slack",
    setup: [
      "One fake Slack workspace answers 429 beyond Slack's tiers (chat.postMessage 3 per 3 s per channel,",
      "Tier 3 methods 50 a minute) and records every call of the whole fleet. Each instance has its own",
      "`NEO_INSTANCE_ID`, `NEO_HTTP_PORT`, `NEO_METRICS_PORT`; each delivery goes round-robin to an",
      "instance, a failed one is retried as Slack does (at once, +5 s, +25 s) to the next instance.",
    ],
  },
  discord: {
    name: "Discord",
    setup: [
      "One bot in 3 shards: each process gets `SHARDS=[k]` `SHARD_COUNT=3` (the 1-process row",
      "`SHARDS=[0,1,2]`) and otherwise the same variables, so ports and instance ids are the shard-derived",
      "ones (docs/discord.md). The fake Discord (gateway + REST) serves 6 guilds, 2 per shard, the",
      "channels spread over them; it answers 429 beyond Discord's global limit (50 requests in any second,",
      "all shards together) and beyond per-route limits (message create + edit 5 per 5 s, delete 5 per",
      "1 s, reaction 1 per 0.25 s, per channel; X-RateLimit-* headers on every answer, as Discord sends",
      "them) and records every call. A mention is a MESSAGE_CREATE to its guild's shard; one sent while",
      "that shard is down is never dispatched, as on Discord (Neo catches up over REST on reconnect).",
      "Each person talks in one guild's channels: Neo's user key, hence the turn bucket, is per guild.",
    ],
  },
};

function section(platform: FleetPlatformName, results: FleetResult[]): string[] {
  const p = PLATFORM[platform];
  const figs = results.map(fleetFigures);
  const single = figs[0]!;
  const s = results[0]!.spec;
  const rows = figs.map((f, i) => {
    const r = results[i]!;
    const dev = i === 0 ? { median: 0, worst: 0 } : shareDeviation(f, single);
    const killed = r.restartMs === undefined ? "—" : `${(r.restartMs / 1000).toFixed(1)} s`;
    const share = percentiles([...f.perUser.values()]);
    return `| ${f.label} | ${f.sent} | ${f.answeredOnce} | ${f.lost} | ${f.duplicated} | ${f.windowsOver} (${f.overCalls} calls) | ${share.median.toFixed(1)} | ${i === 0 ? "baseline" : `${pct(dev.median)} / ${pct(dev.worst)}`} | ${ms(f.p50)} | ${ms(f.p99)} | ${killed} |`;
  });
  const bound = bucketBound(s);
  const checks = figs.map((f, i) => {
    const r = results[i]!;
    const rates = [...f.perUser.values()];
    const over = rates.filter((x) => x > bound + 1e-9).length;
    return `- ${f.label}: a user's answers a minute in the window: max ${Math.max(...rates).toFixed(1)}; users above the bucket's ${bound.toFixed(1)}: ${over} of ${rates.length}; messages answered in a write that answered others too (merged): ${r.answeredTogether}${r.note ? `; ${r.note}` : ""}`;
  });
  const calls = results.map(
    (r) =>
      `- ${r.spec.label}: ${Object.entries(r.calls)
        .sort()
        .map(([k, n]) => `${k} ×${n}`)
        .join(", ")}${r.warmupLost ? `; warm-up messages never answered: ${r.warmupLost}` : ""}`,
  );
  // Which messages a row lost or answered twice, and when each was sent relative to the kill.
  const inexact = results.flatMap((r) => {
    const bad = r.sent.filter((x) => x.answers.length !== 1);
    if (bad.length === 0) return [];
    const when = (t: number) =>
      r.killedAt === undefined
        ? `${((t - r.loadStartedAt) / 1000).toFixed(1)} s into the load`
        : `${((t - r.killedAt) / 1000).toFixed(1)} s from the kill`;
    const shown = bad
      .slice(0, 20)
      .map((x) => `${x.token} in ${x.conv} (${x.answers.length} answers, sent ${when(x.sentAt)})`);
    return [
      `- ${r.spec.label}: ${shown.join(", ")}${bad.length > 20 ? `, and ${bad.length - 20} more` : ""}`,
    ];
  });
  return [
    `### ${p.name}`,
    "",
    ...p.setup,
    `The 1-process row is the baseline (median ${percentiles([...single.perUser.values()]).median.toFixed(1)} answers a minute per user).`,
    "",
    `| processes, store | sent | answered once | lost | duplicated | windows over a ${p.name} limit | a user's answers a minute in the window (median) | user share vs 1 process (median / worst) | answer p50 | answer p99 | kill → restarted |`,
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    "Per row, the turn-rate check (a user above the bucket's bound got turns the fleet-wide bucket should",
    "have held back, unless their messages were answered together with others):",
    "",
    ...checks,
    "",
    `Calls the fake ${p.name} answered, by ${platform === "slack" ? "method" : "route (ids as #)"} and status:`,
    "",
    ...calls,
    ...(inexact.length
      ? [
          "",
          "Messages not answered exactly once (the restarted instance was back after the row's last column):",
          "",
          ...inexact,
        ]
      : []),
  ];
}

export function fleetMarkdown(results: FleetResult[], cmd: string, machine: string, tookS: number): string {
  const s = results[0]!.spec;
  const platforms = [...new Set(results.map((r) => r.spec.platform))];
  return [
    "## Fleet (`npm run bench:fleet`)",
    "",
    `_Source: \`bench/system/fleet.ts\`, \`fleet-slack.ts\`, \`fleet-discord.ts\` (${tookS.toFixed(0)} s). ${machine}. One run per`,
    "row (not a median of several runs: each row is minutes of real processes on a 2-core machine).",
    `Reproduce: \`${cmd}\`._`,
    "",
    "Each row: the REAL Neo processes (`node --import tsx src/main.ts`) against one platform's fake and",
    "the scripted model (200 ms a call). Store: the shared Redis on 127.0.0.1:6379 under a key prefix of",
    "the run's own, or a local 3-primary Redis Cluster the bench starts (`REDIS_CLUSTER=true`). Load: one",
    `warm-up mention in each of the first half of the ${s.channels} channels, then ${s.messages} mentions open loop over`,
    `${s.sendMs / 1000} s, round the channels (the other half never seen before), from ${s.users} users. In the 3-process rows`,
    "instance 2 is SIGKILLed at 40 % of the send window and restarted at once. The user turn rate is set",
    `to bind (\`NEO_USER_TURNS_PER_MINUTE=${s.turnsPerMinute}\`, burst ${s.turnBurst}; each user sends ${((s.messages / s.users) * (60_000 / s.sendMs)).toFixed(1)} a minute), so a user's share is`,
    "measured: answers to their messages within the send window, per minute (the configured bucket",
    `allows at most ${bucketBound(s).toFixed(1)} a minute over the window, burst included); the share column gives the median /`,
    "worst deviation of a user's share from the same platform's 1-process row. Latency is send → first",
    "answer, including turns held back by the turn rate. Windows over a limit: distinct (limit, key,",
    "window) in which the fake refused a call for going over that limit.",
    "",
    ...platforms.flatMap((p, i) => [
      ...(i > 0 ? [""] : []),
      ...section(
        p,
        results.filter((r) => r.spec.platform === p),
      ),
    ]),
  ].join("\n");
}
