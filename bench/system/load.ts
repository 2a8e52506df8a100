/**
 * The load: closed-loop conversations, as people chat — each conversation sends its next message
 * once the previous one is answered (or after `answerTimeoutMs`, so a lost message does not stall
 * it), after a think time. Slack conversations are DMs (one DM channel = one conversation); Discord
 * conversations are a mention in #general (Neo opens a thread on it) then follow-ups in that thread.
 * After the last send the run drains (every message answered, or `drainMs` passed) and settles a
 * little more so late duplicates are counted.
 */
import { percentiles } from "../types.js";
import { type Conversation, createSlackDelivery, type DeliveryStats, sendMessage } from "./drivers.js";
import { now, type Platform, type Sent } from "./ledger.js";
import { sleep } from "./procs.js";
import { SIGNING_SECRET, type Stack } from "./stack.js";

export interface LoadSpec {
  slackConversations: number;
  discordConversations: number;
  messagesPerConversation: number;
  /** Pause after an answer before the next message. */
  thinkMs: number;
  /** Conversations start spread over this long. */
  rampMs: number;
  answerTimeoutMs: number;
  drainMs: number;
  /** Tokens are `<prefix><platform initial><conversation>x<n>`; unique per run. */
  prefix: string;
}

export interface PlatformFigures {
  platform: Platform;
  sent: number;
  answeredOnce: number;
  /** No answer at all. */
  lost: number;
  /** More than one answer. */
  duplicated: number;
  feedback: { median: number; p99: number };
  answer: { median: number; p99: number };
}

export interface LoadResult {
  spec: LoadSpec;
  startedAt: number;
  endedAt: number;
  /** Answered messages per second, first send to last answer. */
  throughput: number;
  platforms: PlatformFigures[];
  all: Sent[];
  slackDelivery: DeliveryStats;
  peakRssBytes: number;
  lostTokens: string[];
  duplicatedTokens: string[];
  /** What the fakes answered, by method/route and status. */
  calls: Record<string, number>;
  /** The bot's own counters at the end (turns, write-back drops, queue wait, 429s). */
  botMetrics: string[];
}

const METRICS =
  /^neo_(turns_total|writeback_dropped_total|queue_wait_seconds_(sum|count)|platform_rate_limited_total|slack_gate_(waits|dropped|refused)_total)/;

export async function runLoad(stack: Stack, spec: LoadSpec): Promise<LoadResult> {
  const delivery = createSlackDelivery(() => stack.eventsUrl, SIGNING_SECRET);
  const convs: Conversation[] = [
    ...Array.from({ length: spec.slackConversations }, (_, i) => ({
      name: `slack:D${spec.prefix.toUpperCase()}${String(i).padStart(4, "0")}`,
      platform: "slack" as const,
      index: i,
    })),
    ...Array.from({ length: spec.discordConversations }, (_, i) => ({
      name: `discord:${spec.prefix}${i}`,
      platform: "discord" as const,
      index: i,
    })),
  ];
  const tokens: string[] = [];
  const startedAt = now();
  const runConversation = async (conv: Conversation, n: number): Promise<void> => {
    await sleep((spec.rampMs * n) / convs.length);
    for (let k = 0; k < spec.messagesPerConversation; k++) {
      const token = `${spec.prefix}${conv.platform[0]}${conv.index}x${k}`;
      tokens.push(token);
      await sendMessage(stack, delivery, conv, token);
      await stack.ledger.answered(token, spec.answerTimeoutMs);
      if (spec.thinkMs) await sleep(spec.thinkMs);
    }
  };
  await Promise.all(convs.map((c, n) => runConversation(c, n)));
  const drainUntil = Date.now() + spec.drainMs;
  const open = () => tokens.filter((t) => (stack.ledger.sent.get(t)?.answers.length ?? 0) === 0);
  while (open().length > 0 && Date.now() < drainUntil) await sleep(100);
  await sleep(2000); // late duplicates
  const all = tokens.map((t) => stack.ledger.sent.get(t)!);
  const answerTimes = all.flatMap((s) => s.answers);
  const endedAt = answerTimes.length ? Math.max(...answerTimes) : now();
  const answered = all.filter((s) => s.answers.length > 0).length;
  return {
    spec,
    startedAt,
    endedAt,
    throughput: answered / ((endedAt - startedAt) / 1000),
    platforms: (["slack", "discord"] as const).map((p) => figures(p, all)).filter((f) => f.sent > 0),
    all,
    slackDelivery: delivery.stats,
    peakRssBytes: stack.peakRss(),
    lostTokens: all.filter((s) => s.answers.length === 0).map((s) => s.token),
    duplicatedTokens: all.filter((s) => s.answers.length > 1).map((s) => s.token),
    calls: stack.callCounts(),
    botMetrics: await stack.metrics(METRICS),
  };
}

function figures(platform: Platform, all: readonly Sent[]): PlatformFigures {
  const mine = all.filter((s) => s.platform === platform);
  const answered = mine.filter((s) => s.answers.length > 0);
  const pct = (xs: number[]) => (xs.length ? percentiles(xs) : { median: Number.NaN, p99: Number.NaN });
  return {
    platform,
    sent: mine.length,
    answeredOnce: mine.filter((s) => s.answers.length === 1).length,
    lost: mine.length - answered.length,
    duplicated: mine.filter((s) => s.answers.length > 1).length,
    feedback: pct(
      mine.flatMap((s) => (s.firstFeedbackAt === undefined ? [] : [s.firstFeedbackAt - s.sentAt])),
    ),
    answer: pct(answered.map((s) => Math.min(...s.answers) - s.sentAt)),
  };
}
