/** The overhead part of the system suite's block of BENCHMARKS.md (bench/system/overhead.ts). */
import { percentiles } from "../types.js";
import { medianOf, type OverheadResult, type OverheadRun, REDIS_COUNTED } from "./overhead.js";
import { APP_LABEL, APP_NAMES, type PerApp } from "./peers.js";
import { goal, ms } from "./report.js";

const p99 = (xs: number[]) => (xs.length ? percentiles(xs).p99 : Number.NaN);
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? (a / b).toFixed(2) : "—");
const cpu = (x: number) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : "—");
const within = (a: number, b: number, limit: number) =>
  `${ratio(a, b)} (${goal(a / b <= limit)}, ≤ ${limit.toFixed(1)})`;

const modelCalls = (run: OverheadRun) =>
  Object.entries(run.neoModelCalls)
    .sort()
    .map(([purpose, n]) => `${purpose} ${n.toFixed(2)}`)
    .join(", ");

function handlingRow(run: OverheadRun): string {
  const med = (a: keyof PerApp<number>) => medianOf(run.times[a]);
  const cells = APP_NAMES.map((a) => `${ms(med(a))} / ${ms(p99(run.times[a]))}`);
  return `| ${run.label} | ${cells.join(" | ")} | ${ms(medianOf(run.neoToModel))} | ${ms(medianOf(run.neoFromModel))} | ${within(med("neo"), med("bare"), 1.5)} | ${within(med("neo"), med("chat"), 1.0)} |`;
}

export function overheadMarkdown(r: OverheadResult): string {
  const burst = r.runs.find((run) => run.burst);
  const nc = r.newChannels;
  const toAll = burst ? (a: keyof PerApp<number>) => medianOf(burst.toAll[a]) : () => Number.NaN;
  const ncCell = (a: keyof PerApp<number>) =>
    nc.answered[a] === nc.measured
      ? ms(nc.toAll[a])
      : `${nc.answered[a]} of ${nc.measured} in ${nc.timeoutMs / 1000} s`;
  const cpuRow = (label: string, c: PerApp<number>, vsBare: string) =>
    `| ${label} | ${APP_NAMES.map((a) => cpu(c[a])).join(" | ")} | ${vsBare} | ${ratio(c.neo, c.chat)} |`;
  const cpuRows = [
    cpuRow(
      `warm-up: ${r.warmMessages - r.burstSize} messages in bursts of ${r.burstSize}, after one in each channel (V8 still compiling)`,
      r.warmCpuPerMessage,
      `${ratio(r.warmCpuPerMessage.neo, r.warmCpuPerMessage.bare)} (no goal)`,
    ),
    ...[
      ...r.runs.map((run) => [run.label, run.cpuPerMessage] as const),
      [`never-seen channels (${nc.measured} after 50, all ${nc.measured + 50})`, nc.cpuPerMessage] as const,
    ].map(([label, c]) => cpuRow(label, c, within(c.neo, c.bare, 1.5))),
  ];
  return [
    "### Overhead: Neo vs a bare Bolt app making the same model call, and vs the Chat SDK",
    "",
    "Reproduce: `npm run bench:system -- overhead`. Same Slack mentions, same fake Slack Web API, same scripted",
    "model (answers at once), same run, three apps each its own process: **Neo** (`node --import tsx src/main.ts`,",
    `the bench's redis-server as its store, no tools, NEO_MAX_CONCURRENT_TURNS=${r.neoConcurrency}, the default); the baseline **bare Bolt + model**`,
    "(`bench/system/bare-bolt.ts`: Bolt HTTP receiver that asks the model the mention's text — the openai SDK,",
    "streamed, usage asked for, as Neo asks — and posts the answer in the thread; no store); and the peer",
    "**Chat SDK** (`bench/system/chat-sdk-bot.ts`: the same bot on the Vercel Chat SDK, `chat` +",
    "`@chat-adapter/slack` + `@chat-adapter/state-memory` 4.41.0, behind node's http server). **Handling time** = from",
    "the signed Events API request being sent to the fake Web API receiving the `chat.postMessage` that answers",
    "it. Each mention is a new top-level message (a new conversation) in one of the app's own channels (Slack",
    "paces posts per channel), each seen once in a warm-up, reused only after Slack's ~1 post/s per channel has",
    `passed (not measured). Before anything is measured each app answers ${r.warmMessages} messages (its channels once, then`,
    `bursts of ${r.burstSize}): a bot runs for days, and what is measured is its steady state, not V8 compiling its first`,
    "thousand messages (that warm-up's CPU is shown below). The order of the three apps rotates every round (one at a time: every message; bursts:",
    `every burst, ${r.burstRounds} rounds). Neo's time is split at its model call (medians): *to model call* = request sent →`,
    "the call reaching the endpoint; *model call to reply* = the endpoint's instant answer → the reply at the fake.",
    "Goals (issue 30): Neo / bare ≤ 1.5 one at a time and for a burst's median; Neo / Chat SDK ≤ 1.0.",
    "",
    `| run | ${APP_NAMES.map((a) => `${APP_LABEL[a]} median / p99`).join(" | ")} | Neo: to model call | Neo: model call to reply | Neo / bare | Neo / Chat SDK |`,
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...r.runs.map(handlingRow),
    "",
    `Time to all answered (first send → last answer; bursts: median of ${r.burstRounds} rounds). Never-seen channels: 50`,
    "mentions at once in 50 channels the app has never seen, and once answered, 100 more at once in 100 other",
    "never-seen channels; the figure is the 100's (Neo asks `conversations.info`, Tier 3, 50 a minute, for a",
    "channel it does not know; the part starts once its warm-up lookups have left that minute; one round, in the",
    "order bare, Chat SDK, Neo). Goals: burst ≤ 2.0 × bare, never-seen channels ≤ 3 × bare, ≤ 1.0 × Chat SDK.",
    "",
    `| part | ${APP_NAMES.map((a) => APP_LABEL[a]).join(" | ")} | Neo / bare | Neo / Chat SDK |`,
    "| --- | --- | --- | --- | --- | --- |",
    ...(burst
      ? [
          `| ${burst.label} | ${APP_NAMES.map((a) => ms(toAll(a))).join(" | ")} | ${within(toAll("neo"), toAll("bare"), 2.0)} | ${within(toAll("neo"), toAll("chat"), 1.0)} |`,
        ]
      : []),
    `| ${nc.measured} mentions in ${nc.measured} never-seen channels right after 50 others | ${APP_NAMES.map(ncCell).join(" | ")} | ${within(nc.toAll.neo, nc.toAll.bare, 3.0)} | ${within(nc.toAll.neo, nc.toAll.chat, 1.0)} |`,
    "",
    "CPU per answered message: user + system time of the app's process (all threads, `/proc/<pid>/stat`) over the",
    "whole part — its own rounds, the others' rounds it sat through, and any work after its posts — divided by the",
    "messages it answered. Goal: Neo ≤ 1.5 × bare. The baselines make one model call per message; Neo's calls per",
    `answered message: ${r.runs.map((run) => `${run.burst ? "bursts" : "one at a time"} ${modelCalls(run)}`).join("; ")}.`,
    "",
    `| part | ${APP_NAMES.map((a) => APP_LABEL[a]).join(" | ")} | Neo / bare | Neo / Chat SDK |`,
    "| --- | --- | --- | --- | --- | --- |",
    ...cpuRows,
    "",
    `Unanswered (one at a time and bursts): ${APP_NAMES.map((a) => `${APP_LABEL[a]} ${r.lost[a]}`).join(", ")}. Slack calls the fake answered (all apps, warm-ups included): ${Object.entries(
      r.slackCalls,
    )
      .sort()
      .map(([k, v]) => `${k} × ${v}`)
      .join(", ")}.`,
    "",
    ...redisMarkdown(r),
  ].join("\n");
}

/** Redis traffic per message (one at a time), counted on the wire (bench/system/redis-wire.ts). */
function redisMarkdown(r: OverheadResult): string[] {
  const redis = r.redis;
  if (!redis) return [];
  const cell = (x: { roundTrips: number; commands: number }) => `${x.roundTrips} | ${x.commands}`;
  return [
    `Redis per message, one at a time (medians of ${REDIS_COUNTED} mentions sent after the parts above, Neo restarted on a`,
    "pass-through between it and Redis, which the parts above do without: the hop it adds to every round trip",
    "would be in their handling times. A round trip is one write of the client, i.e. the commands node-redis",
    "sent together without waiting; goal: ≤ 3 round trips from the event to the model call, ≤ 2 from the answer",
    "to the post):",
    "",
    "| part | round trips | commands | goal |",
    "| --- | --- | --- | --- |",
    `| event → model call | ${cell(redis.toModel)} | ${goal(redis.toModel.roundTrips <= 3)} |`,
    `| model answer → post | ${cell(redis.fromModel)} | ${goal(redis.fromModel.roundTrips <= 2)} |`,
    `| whole message (send → its next send, incl. work after the post) | ${cell(redis.whole)} | |`,
  ];
}
