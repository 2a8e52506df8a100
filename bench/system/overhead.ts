/**
 * Overhead: the same Slack mentions through Neo (the real process, model answering at once, no
 * tools) and through a bare Bolt app (bench/system/bare-bolt.ts, its own process) that only acks and
 * posts a reply — both against the same fake Slack Web API, in the same run.
 *
 * Handling time of one message = from the moment the signed Events API request is sent to the
 * moment the fake Slack Web API receives the `chat.postMessage` that answers it (both clocks in
 * this process). Every mention is a new top-level message, so a new conversation (its own thread),
 * in one of a pool of channels each process has seen once in its warm-up: Neo asks Slack what kind of
 * place a channel is once (`conversations.info`, Tier 3: 50 a minute, then cached), which is a cost
 * of a channel's first message, not of a message. A channel is used again only after Slack's pace of
 * about one post a second per channel has passed (that wait is not measured), so it never applies.
 */
import { percentiles } from "../types.js";
import { createSlackDelivery, envelope, type SlackDelivery } from "./drivers.js";
import { question } from "./model.js";
import { freePort, kill, start, until } from "./procs.js";
import { type RedisPerMessage, redisPerMessage, settled } from "./redis-per-message.js";
import { ROOT, SIGNING_SECRET, SLACK_USERS, type Stack, startStack } from "./stack.js";

export interface OverheadRun {
  label: string;
  /** Sent all at once (goal ≤ 2.0) rather than one at a time (goal ≤ 1.5). */
  burst: boolean;
  /** Per-message handling time (ms), for Neo, the bare app, and the bare app asking the model first. */
  neo: number[];
  bare: number[];
  bareModel: number[];
  /** Neo only: request sent → its model call reaching the endpoint; model call → answer received. */
  neoToModel: number[];
  neoFromModel: number[];
  /** Neo, one at a time only: Redis round trips and commands per message (see `redisPerMessage`). */
  redis?: RedisPerMessage;
}

export interface OverheadResult {
  burstSize: number;
  runs: OverheadRun[];
  neoConcurrency: number;
  lostNeo: number;
  lostBare: number;
  lostBareModel: number;
  /** Slack Web API calls the fake answered over the whole run (both apps), "method status" → count. */
  slackCalls: Record<string, number>;
}

const SEQUENTIAL = Number(process.env.BENCH_OVERHEAD_N ?? 60);
/**
 * Slack posts about one message a second per channel, in short bursts (the fake: 3 in 3 s); Neo may
 * post a status line and its answer for one message, so a channel rests this long between uses.
 */
const CHANNEL_REST_MS = 3_000;
/** `conversations.info` is Tier 3 (50 a minute per workspace): a restarted Neo's warm-up waits this long after the last. */
const TIER3_WINDOW_MS = 61_000;

/** The channels mentions go to, round robin; the warm-up sends one message to each. */
interface ChannelPool {
  channels: string[];
  next: number;
  /** When each channel last got an answer. */
  lastAnswer: Map<string, number>;
}

const poolChannel = (i: number) => `COVH${String(i).padStart(3, "0")}`;

function channelPool(size: number): ChannelPool {
  return {
    channels: Array.from({ length: size }, (_, i) => poolChannel(i)),
    next: 0,
    lastAnswer: new Map(),
  };
}

function nextChannel(pool: ChannelPool): string {
  const c = pool.channels[pool.next % pool.channels.length]!;
  pool.next++;
  return c;
}

async function mention(stack: Stack, d: SlackDelivery, token: string, channel: string): Promise<void> {
  const ts = stack.slack.nextTs();
  const user = SLACK_USERS[token.length % SLACK_USERS.length]!.id;
  const event = { type: "app_mention", channel, user, text: `<@UNEO> ${question(token)}`, ts, event_ts: ts };
  stack.ledger.send(token, "slack", `slack:${channel}`);
  await d.deliver(envelope(stack.slack.teamId, event));
}

/** Neo's handling time split at the model call (the endpoint answers at once). */
function split(stack: Stack, tokens: string[]): Pick<OverheadRun, "neoToModel" | "neoFromModel"> {
  const toModel: number[] = [];
  const fromModel: number[] = [];
  for (const t of tokens) {
    const s = stack.ledger.sent.get(t);
    const at = stack.model.arrivals.get(t);
    if (!s?.answers.length || at === undefined) continue;
    toModel.push(at - s.sentAt);
    fromModel.push(s.answers[0]! - at);
  }
  return { neoToModel: toModel, neoFromModel: fromModel };
}

/**
 * Send `tokens` — all at once (burst) or one after the other — and return handling times. Each goes
 * to the pool's next channel, once that channel has rested (a burst must not need a channel twice).
 */
async function drive(
  stack: Stack,
  d: SlackDelivery,
  pool: ChannelPool,
  tokens: string[],
  burst: boolean,
): Promise<number[]> {
  if (burst && tokens.length > pool.channels.length) throw new Error("burst larger than the channel pool");
  const rest = async (channel: string) => {
    const wait = (pool.lastAnswer.get(channel) ?? 0) + CHANNEL_REST_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  };
  const channels = tokens.map(() => nextChannel(pool));
  const t0 = Date.now();
  if (burst) {
    await Promise.all(channels.map(rest));
    await Promise.all(tokens.map((t, i) => mention(stack, d, t, channels[i]!)));
  } else {
    for (const [i, t] of tokens.entries()) {
      await rest(channels[i]!);
      await mention(stack, d, t, channels[i]!);
      await stack.ledger.answered(t, 30_000);
      pool.lastAnswer.set(channels[i]!, Date.now());
      await settled(stack);
    }
  }
  await Promise.all(tokens.map((t) => stack.ledger.answered(t, 60_000)));
  const end = Date.now();
  for (const c of channels) pool.lastAnswer.set(c, end);
  process.stderr.write(`bench:system: overhead ${tokens[0]}…: ${tokens.length} in ${Date.now() - t0} ms\n`);
  return tokens.flatMap((t) => {
    const s = stack.ledger.sent.get(t)!;
    return s.answers.length ? [s.answers[0]! - s.sentAt] : [];
  });
}

export async function runOverhead(burstSize: number, defaultConcurrency: number): Promise<OverheadResult> {
  const warmup = Math.max(burstSize, 20);
  // The fake answers `conversations.info` for these (public channels Neo was invited to).
  const slackChannels = Array.from({ length: warmup }, (_, i) => ({
    id: poolChannel(i),
    name: `bench-${i}`,
  }));
  const stack = await startStack({ latencyMs: 0, mcp: false, countRedis: true, slackChannels });
  const startBare = async (name: string, extraEnv: Record<string, string> = {}) => {
    const port = await freePort();
    const p = start(
      name,
      process.execPath,
      ["--import", "tsx", "bench/system/bare-bolt.ts"],
      {
        SLACK_BOT_TOKEN: "xoxb-bench-token",
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: stack.slack.apiUrl,
        PORT: String(port),
        ...extraEnv,
      },
      ROOT,
    );
    return { p, delivery: createSlackDelivery(`http://127.0.0.1:${port}/slack/events`, SIGNING_SECRET) };
  };
  const bare = await startBare("bare-bolt");
  const bareModel = await startBare("bare-bolt-model", { MODEL_URL: stack.model.url });
  try {
    const neoD = createSlackDelivery(stack.eventsUrl, SIGNING_SECRET);
    const bareD = bare.delivery;
    const bareModelD = bareModel.delivery;
    const ids = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`);
    // Each app has its own pool of the same channels (it rests between its own uses of one).
    const barePool = channelPool(warmup);
    const bareModelPool = channelPool(warmup);
    const neoPool = channelPool(warmup);
    let lastWarmup = 0;
    const startNeo = async (concurrency: number, tag: string) => {
      await stack.killBot();
      await stack.startBot({ NEO_MAX_CONCURRENT_TURNS: String(concurrency) });
      // A new process knows no channel yet: the warm-up shows it each one once, asking Slack about
      // each (not measured), once the previous process's lookups have left Tier 3's minute.
      const wait = lastWarmup + TIER3_WINDOW_MS - Date.now();
      if (lastWarmup > 0 && wait > 0) await new Promise((r) => setTimeout(r, wait));
      lastWarmup = Date.now();
      neoPool.next = 0;
      await drive(stack, neoD, neoPool, ids(`ow${tag}`, warmup), false);
    };
    for (const b of [bare, bareModel])
      await until(`${b.p.name} ready`, () => b.p.output().includes("bare-bolt: ready"), 60_000);
    await drive(stack, bareD, barePool, ids("owb", warmup), false);
    await drive(stack, bareModelD, bareModelPool, ids("owm", warmup), false);
    const runs: OverheadRun[] = [];
    // The bare apps go first each time; the same tokens shape and channels pattern for all three.
    await startNeo(defaultConcurrency, "n");
    const run = async (label: string, tag: string, n: number, burst: boolean): Promise<OverheadRun> => {
      const bareTimes = await drive(stack, bareD, barePool, ids(`${tag}b`, n), burst);
      const bareModelTimes = await drive(stack, bareModelD, bareModelPool, ids(`${tag}m`, n), burst);
      const neoTimes = await drive(stack, neoD, neoPool, ids(`${tag}n`, n), burst);
      const neoIds = ids(`${tag}n`, n);
      const redis = burst ? undefined : redisPerMessage(stack, neoIds);
      return {
        label,
        burst,
        bare: bareTimes,
        bareModel: bareModelTimes,
        neo: neoTimes,
        ...split(stack, neoIds),
        redis,
      };
    };
    runs.push(await run(`${SEQUENTIAL} sent one at a time`, "os", SEQUENTIAL, false));
    runs.push(
      await run(
        `burst of ${burstSize} sent at once, NEO_MAX_CONCURRENT_TURNS=${defaultConcurrency} (default)`,
        "ob",
        burstSize,
        true,
      ),
    );
    await startNeo(burstSize, "c");
    runs.push(
      await run(
        `burst of ${burstSize} sent at once, NEO_MAX_CONCURRENT_TURNS=${burstSize}`,
        "oc",
        burstSize,
        true,
      ),
    );
    const lost = (tags: string[]) =>
      [...stack.ledger.sent.values()].filter(
        (s) => tags.some((t) => s.token.startsWith(t)) && s.answers.length === 0,
      ).length;
    return {
      burstSize,
      runs,
      neoConcurrency: defaultConcurrency,
      lostNeo: lost(["osn", "obn", "ocn"]),
      lostBare: lost(["osb", "obb", "ocb"]),
      lostBareModel: lost(["osm", "obm", "ocm"]),
      slackCalls: countCalls(stack.slack.calls.map((c) => `${c.method} ${c.status}`)),
    };
  } finally {
    await kill(bare.p);
    await kill(bareModel.p);
    await stack.close();
  }
}

function countCalls(names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of names) out[n] = (out[n] ?? 0) + 1;
  return out;
}

export function medianOf(xs: readonly number[]): number {
  return xs.length ? percentiles(xs).median : Number.NaN;
}
