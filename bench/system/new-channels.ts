/**
 * The overhead bench's never-seen channels (issue 30, "no answer waits for metadata"): a launch day,
 * or a restart in a busy workspace. Each app gets 50 mentions at once in 50 channels it has never
 * seen, and right after they are answered 100 more at once in 100 other never-seen channels; the
 * figure is the 100's time to all answered (first send → last answer). Neo asks Slack what kind of
 * place a channel is with `conversations.info`, Tier 3: 50 a minute per workspace, so the first 50
 * use the minute's budget. The part starts once Neo's warm-up lookups have left that minute. One
 * round per app (a second would find the budget already spent), in the order bare, Chat SDK, Neo.
 */
import { APP_NAMES, type AppName, type BenchApp, handling, LETTER, mention, type PerApp } from "./peers.js";
import { cpuMs } from "./procs.js";
import type { Stack } from "./stack.js";

const BEFORE = 50;
const MEASURED = 100;
/** How long the 100 may take before the bench reports how many were answered instead. */
const TIMEOUT_MS = 30_000;
/** `conversations.info`'s Tier 3 minute, and a second to spare. */
const TIER3_WINDOW_MS = 61_000;

const channelId = (app: AppName, i: number) => `CNEW${LETTER[app]}${String(i).padStart(3, "0")}`;

/** Every channel this part uses (the fake answers `conversations.info` for them). */
export const newChannelIds = (): string[] =>
  APP_NAMES.flatMap((a) => Array.from({ length: BEFORE + MEASURED }, (_, i) => channelId(a, i)));

export interface NewChannelsResult {
  /** Time to all of the 100 answered (ms), NaN when not all were within the timeout. */
  toAll: PerApp<number>;
  /** How many of the 100 were answered within the timeout. */
  answered: PerApp<number>;
  /** Median handling time of the 100 answered ones (ms). */
  handling: PerApp<number[]>;
  /** CPU (user + system) per answered message over the 150 (ms). */
  cpuPerMessage: PerApp<number>;
  measured: number;
  timeoutMs: number;
}

async function sendAll(stack: Stack, app: BenchApp, tokens: string[], first: number): Promise<boolean[]> {
  await Promise.all(tokens.map((t, i) => mention(stack, app, t, channelId(app.name, first + i))));
  return Promise.all(tokens.map((t) => stack.ledger.answered(t, TIMEOUT_MS)));
}

export async function runNewChannels(
  stack: Stack,
  apps: PerApp<BenchApp>,
  lastLookupsAt: number,
): Promise<NewChannelsResult> {
  const wait = lastLookupsAt + TIER3_WINDOW_MS - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const ids = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`);
  const result: NewChannelsResult = {
    toAll: { bare: Number.NaN, chat: Number.NaN, neo: Number.NaN },
    answered: { bare: 0, chat: 0, neo: 0 },
    handling: { bare: [], chat: [], neo: [] },
    cpuPerMessage: { bare: Number.NaN, chat: Number.NaN, neo: Number.NaN },
    measured: MEASURED,
    timeoutMs: TIMEOUT_MS,
  };
  for (const a of APP_NAMES) {
    const l = LETTER[a].toLowerCase();
    const cpu0 = cpuMs(apps[a].pid());
    const before = ids(`nb${l}`, BEFORE);
    await sendAll(stack, apps[a], before, 0);
    const measured = ids(`nm${l}`, MEASURED);
    const t0 = Date.now();
    const ok = await sendAll(stack, apps[a], measured, BEFORE);
    const answers = measured.map((t) => stack.ledger.sent.get(t)!.answers[0] ?? Number.NaN);
    result.answered[a] = ok.filter(Boolean).length;
    result.toAll[a] = Math.max(...answers) - t0;
    result.handling[a] = handling(stack, measured);
    result.cpuPerMessage[a] =
      (cpuMs(apps[a].pid()) - cpu0) / Math.max(1, handling(stack, [...before, ...measured]).length);
    process.stderr.write(
      `bench:system: overhead new channels ${a}: ${result.answered[a]}/${MEASURED} in ${result.toAll[a].toFixed(0)} ms\n`,
    );
  }
  return result;
}
