/**
 * Overhead: the same Slack mentions through Neo (the real process, model answering at once, no
 * tools), the bare Bolt app making the same streamed model call (the baseline) and the same bot on
 * the Vercel Chat SDK (the peer) — see bench/system/peers.ts — against the same fake Slack Web API and
 * scripted model, in one run, the order of the three alternating from round to round.
 *
 * Handling time of one message = from the moment the signed Events API request is sent to the
 * moment the fake Slack Web API receives the `chat.postMessage` that answers it (both clocks in this
 * process). Every mention is a new top-level message, so a new conversation (its own thread), in one
 * of the app's pool of channels, each seen once in its warm-up: Neo asks Slack what kind of place a
 * channel is (`conversations.info`, Tier 3), a cost of a channel's first message, measured on its own
 * by the never-seen-channels part (bench/system/new-channels.ts). A channel is used again only after
 * Slack's pace of about one post a second per channel has passed (that wait is not measured).
 */
import { percentiles } from "../types.js";
import { type NewChannelsResult, newChannelIds, runNewChannels } from "./new-channels.js";
import {
  APP_NAMES,
  type AppName,
  type BenchApp,
  handling,
  LETTER,
  mention,
  type PerApp,
  rotated,
  startPeers,
} from "./peers.js";
import { cpuMs } from "./procs.js";
import { type RedisPerMessage, redisPerMessage, settled } from "./redis-per-message.js";
import { type Stack, startStack } from "./stack.js";

export interface OverheadRun {
  label: string;
  burst: boolean;
  /** Per-message handling times (ms) of each app, all rounds together. */
  times: PerApp<number[]>;
  /** Bursts: send of a round's first message → its last answer (ms), one per round. */
  toAll: PerApp<number[]>;
  /** CPU (user + system) of each app's process over the whole part, per answered message (ms). */
  cpuPerMessage: PerApp<number>;
  /** Neo's model requests during the part by purpose (turn, writeback, …), per answered message. */
  neoModelCalls: Record<string, number>;
  /** Neo only: request sent → its model call reaching the endpoint; model call → answer received. */
  neoToModel: number[];
  neoFromModel: number[];
}

export interface OverheadResult {
  burstSize: number;
  burstRounds: number;
  runs: OverheadRun[];
  newChannels: NewChannelsResult;
  /**
   * Neo's Redis round trips and commands per message (`redisPerMessage`), one at a time, counted in a
   * part of their own at the end with the bot restarted on the counting wire: the hop it adds (another
   * process on every round trip) stays out of the handling times above.
   */
  redis?: RedisPerMessage;
  neoConcurrency: number;
  /** Messages each app answered before the measured parts (its first pass and the bursts after). */
  warmMessages: number;
  /** CPU per answered message over the warm-up's bursts (V8 still compiling). */
  warmCpuPerMessage: PerApp<number>;
  /** Messages never answered, per app, over the measured parts. */
  lost: PerApp<number>;
  /** Slack Web API calls the fake answered over the whole run (all apps), "method status" → count. */
  slackCalls: Record<string, number>;
}

/** One at a time: 200, as 60 left the CPU figure (10 ms clock ticks, one part) swinging ±25 % run to run. */
const SEQUENTIAL = Number(process.env.BENCH_OVERHEAD_N ?? 200);
const BURST_ROUNDS = Number(process.env.BENCH_OVERHEAD_ROUNDS ?? 3);
/** Bursts of 50 per app after the first pass over the channels, before anything is measured. */
const WARM_ROUNDS = Number(process.env.BENCH_OVERHEAD_WARM_ROUNDS ?? 20);
/** Slack posts about one message a second per channel (the fake: 3 in 3 s): a channel rests this long. */
const CHANNEL_REST_MS = 3_000;

/** An app's channels, used round robin; the warm-up sends one message to each. */
interface ChannelPool {
  channels: string[];
  next: number;
  /** When each channel last got an answer. */
  lastAnswer: Map<string, number>;
}

const poolChannel = (app: AppName, i: number) => `COVH${LETTER[app]}${String(i).padStart(3, "0")}`;

function channelPool(app: AppName, size: number): ChannelPool {
  return {
    channels: Array.from({ length: size }, (_, i) => poolChannel(app, i)),
    next: 0,
    lastAnswer: new Map(),
  };
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

/** Send `tokens` to `app` — all at once or one after the other — each to its pool's next rested channel. */
async function drive(stack: Stack, app: BenchApp, pool: ChannelPool, tokens: string[], burst: boolean) {
  if (burst && tokens.length > pool.channels.length) throw new Error("burst larger than the channel pool");
  const rest = async (channel: string) => {
    const wait = (pool.lastAnswer.get(channel) ?? 0) + CHANNEL_REST_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  };
  const channels = tokens.map(() => pool.channels[pool.next++ % pool.channels.length]!);
  if (burst) {
    await Promise.all(channels.map(rest));
    await Promise.all(tokens.map((t, i) => mention(stack, app, t, channels[i]!)));
  } else {
    for (const [i, t] of tokens.entries()) {
      await rest(channels[i]!);
      await mention(stack, app, t, channels[i]!);
      await stack.ledger.answered(t, 30_000);
      pool.lastAnswer.set(channels[i]!, Date.now());
      // Neo's work after the post (write-back, usage) ends before the next message (redis-per-message.ts).
      if (app.name === "neo") await settled(stack);
    }
  }
  await Promise.all(tokens.map((t) => stack.ledger.answered(t, 60_000)));
  const end = Date.now();
  for (const c of channels) pool.lastAnswer.set(c, end);
}

/** Messages Neo answers one at a time on the counting wire (`OverheadResult.redis`). */
export const REDIS_COUNTED = 40;

async function countRedis(
  stack: Stack,
  neoConcurrency: number,
  neo: BenchApp,
  pool: ChannelPool,
): Promise<RedisPerMessage | undefined> {
  if (!stack.redisWire) return undefined;
  await stack.killBot();
  await stack.startBot({ NEO_MAX_CONCURRENT_TURNS: String(neoConcurrency), REDIS_URL: stack.redisWire.url });
  // Its caches of one process (who spoke where, channels, users) filled again first: not counted.
  await drive(
    stack,
    neo,
    pool,
    Array.from({ length: REDIS_COUNTED }, (_, i) => `orw${i}`),
    false,
  );
  const tokens = Array.from({ length: REDIS_COUNTED }, (_, i) => `orn${i}`);
  await drive(stack, neo, pool, tokens, false);
  return redisPerMessage(stack, tokens);
}

const perApp = <T>(f: (a: AppName) => T): PerApp<T> =>
  Object.fromEntries(APP_NAMES.map((a) => [a, f(a)])) as PerApp<T>;

export async function runOverhead(burstSize: number, neoConcurrency: number): Promise<OverheadResult> {
  const warmup = Math.max(burstSize, 20);
  // The fake answers `conversations.info` for these (public channels the apps were invited to).
  const slackChannels = [
    ...APP_NAMES.flatMap((a) => Array.from({ length: warmup }, (_, i) => poolChannel(a, i))),
    ...newChannelIds(),
  ].map((id) => ({ id, name: id.toLowerCase() }));
  const stack = await startStack({ latencyMs: 0, mcp: false, countRedis: true, slackChannels });
  await stack.startBot({ NEO_MAX_CONCURRENT_TURNS: String(neoConcurrency) });
  const peers = await startPeers(stack);
  try {
    const apps = peers.apps;
    const pools = perApp((a) => channelPool(a, warmup));
    const ids = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`);
    // Each app sees each of its channels once (Neo looks each up): not measured.
    for (const a of APP_NAMES)
      await drive(stack, apps[a], pools[a], ids(`ow${LETTER[a].toLowerCase()}`, warmup), false);
    const warmedAt = Date.now();
    // Then each app runs long enough for V8 to have compiled what it runs per message: a bot is a
    // long-running process, and in its first thousand messages the optimising compiler still takes a
    // fifth of Neo's CPU (a quarter more per message than later). Counted apart (`warmCpuPerMessage`).
    const warmCpu0 = perApp((a) => cpuMs(apps[a].pid()));
    const warmTokens = perApp<string[]>(() => []);
    for (let r = 0; r < WARM_ROUNDS; r++)
      for (const a of rotated(APP_NAMES, r)) {
        const batch = ids(`ow${LETTER[a].toLowerCase()}${r}x`, warmup);
        warmTokens[a].push(...batch);
        await drive(stack, apps[a], pools[a], batch, true);
      }
    const warmCpuPerMessage = perApp(
      (a) => (cpuMs(apps[a].pid()) - warmCpu0[a]) / Math.max(1, handling(stack, warmTokens[a]).length),
    );
    const part = async (label: string, tag: string, rounds: number, n: number, burst: boolean) => {
      const tokens = perApp<string[]>(() => []);
      const toAll = perApp<number[]>(() => []);
      const cpu0 = perApp((a) => cpuMs(apps[a].pid()));
      const requests0 = stack.model.ep.requests.length;
      for (let r = 0; r < rounds; r++) {
        for (const a of rotated(APP_NAMES, r)) {
          const batch = ids(`${tag}${LETTER[a].toLowerCase()}${r}x`, n);
          tokens[a].push(...batch);
          await drive(stack, apps[a], pools[a], batch, burst);
          const sent = batch.map((t) => stack.ledger.sent.get(t)!);
          toAll[a].push(
            Math.max(...sent.map((s) => s.answers[0] ?? Number.NaN)) - Math.min(...sent.map((s) => s.sentAt)),
          );
        }
      }
      const cpu = perApp(
        (a) => (cpuMs(apps[a].pid()) - cpu0[a]) / Math.max(1, handling(stack, tokens[a]).length),
      );
      const answered = handling(stack, tokens.neo).length;
      const neoModelCalls: Record<string, number> = {};
      // The baselines send no purpose header; Neo sends one on every call.
      for (const q of stack.model.ep.requests.slice(requests0))
        if (q.purpose !== null) neoModelCalls[q.purpose] = (neoModelCalls[q.purpose] ?? 0) + 1 / answered;
      process.stderr.write(`bench:system: overhead ${label} done\n`);
      return {
        label,
        burst,
        times: perApp((a) => handling(stack, tokens[a])),
        toAll,
        cpuPerMessage: cpu,
        neoModelCalls,
        ...split(stack, tokens.neo),
        tokens,
      };
    };
    // One at a time: rounds of one message per app, the order rotating every message.
    const seq = await part(`${SEQUENTIAL} sent one at a time`, "os", SEQUENTIAL, 1, false);
    const burst = await part(
      `burst of ${burstSize} sent at once (${BURST_ROUNDS} rounds), NEO_MAX_CONCURRENT_TURNS=${neoConcurrency} (default)`,
      "ob",
      BURST_ROUNDS,
      burstSize,
      true,
    );
    const newChannels = await runNewChannels(stack, apps, warmedAt);
    const redis = await countRedis(stack, neoConcurrency, apps.neo, pools.neo);
    const lostOf = (a: AppName) =>
      [...seq.tokens[a], ...burst.tokens[a]].filter((t) => !stack.ledger.sent.get(t)?.answers.length).length;
    const strip = ({ tokens: _t, ...run }: typeof seq): OverheadRun => run;
    return {
      burstSize,
      burstRounds: BURST_ROUNDS,
      runs: [strip(seq), strip(burst)],
      newChannels,
      redis,
      neoConcurrency,
      warmMessages: warmup * (WARM_ROUNDS + 1),
      warmCpuPerMessage,
      lost: perApp(lostOf),
      slackCalls: countCalls(stack.slack.calls.map((c) => `${c.method} ${c.status}`)),
    };
  } finally {
    await peers.close();
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
