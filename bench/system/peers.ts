/**
 * The overhead bench's apps, each its own process against the same fake Slack and model: Neo (the
 * stack's bot), the bare Bolt app calling the model (bench/system/bare-bolt.ts, the baseline) and the
 * same bot on the Vercel Chat SDK (bench/system/chat-sdk-bot.ts, the peer). Each has its own channels
 * (Slack paces posts per channel, so apps sharing one would slow each other) and its CPU read from
 * /proc.
 */
import { createSlackDelivery, envelope, type SlackDelivery } from "./drivers.js";
import { question } from "./model.js";
import { freePort, kill, type Owned, ROOT, start, until } from "./procs.js";
import { SIGNING_SECRET, SLACK_USERS, type Stack } from "./stack.js";

export type AppName = "bare" | "chat" | "neo";
export const APP_NAMES: readonly AppName[] = ["bare", "chat", "neo"];
export type PerApp<T> = Record<AppName, T>;
/** Each app's letter in its channel ids and tokens. */
export const LETTER: PerApp<string> = { bare: "B", chat: "C", neo: "N" };
export const APP_LABEL: Record<AppName, string> = { bare: "bare Bolt + model", chat: "Chat SDK", neo: "Neo" };

export interface BenchApp {
  name: AppName;
  delivery: SlackDelivery;
  /** Its process id (Neo: the current bot process). */
  pid(): number;
}

const SCRIPT: Record<Exclude<AppName, "neo">, string> = {
  bare: "bench/system/bare-bolt.ts",
  chat: "bench/system/chat-sdk-bot.ts",
};

export interface Peers {
  apps: Record<AppName, BenchApp>;
  close(): Promise<void>;
}

/** Start the bare app and the Chat SDK bot beside the stack's (already started) bot. */
export async function startPeers(stack: Stack): Promise<Peers> {
  const owned: Owned[] = [];
  const peer = async (name: Exclude<AppName, "neo">): Promise<BenchApp> => {
    const port = await freePort();
    const p = start(
      name,
      process.execPath,
      // BENCH_PEER_NODE_ARGS: extra node flags for the peers (e.g. --cpu-prof, as BENCH_BOT_NODE_ARGS).
      [
        ...(process.env.BENCH_PEER_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
        "--import",
        "tsx",
        SCRIPT[name],
      ],
      {
        SLACK_BOT_TOKEN: "xoxb-bench-token",
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: stack.slack.apiUrl,
        MODEL_URL: stack.model.url,
        PORT: String(port),
      },
      ROOT,
    );
    owned.push(p);
    await until(
      `${name} ready`,
      () => {
        if (!p.alive()) throw new Error(`${name} exited:\n${p.output().slice(-3000)}`);
        return p.output().includes(": ready");
      },
      60_000,
    );
    return {
      name,
      delivery: createSlackDelivery(() => `http://127.0.0.1:${port}/slack/events`, SIGNING_SECRET),
      pid: () => p.pid,
    };
  };
  const [bare, chat] = [await peer("bare"), await peer("chat")];
  const neo: BenchApp = {
    name: "neo",
    delivery: createSlackDelivery(() => stack.eventsUrl, SIGNING_SECRET),
    pid: () => stack.bot().pid,
  };
  return {
    apps: { bare, chat, neo },
    async close() {
      for (const p of owned) {
        // Profiling: a stop the peer handles (bare-bolt.ts, chat-sdk-bot.ts), so node writes the profile.
        if (process.env.BENCH_PEER_NODE_ARGS && p.alive()) {
          process.kill(p.pid, "SIGTERM");
          await Promise.race([p.exited, new Promise((r) => setTimeout(r, 10_000))]);
        }
        await kill(p);
      }
    },
  };
}

/** `names` rotated by `round`: each app goes first, middle and last in turn. */
export function rotated<T>(names: readonly T[], round: number): T[] {
  const k = round % names.length;
  return [...names.slice(k), ...names.slice(0, k)];
}

/** Send one mention of `token` to `app` in `channel`, as a new top-level message. */
export async function mention(stack: Stack, app: BenchApp, token: string, channel: string): Promise<void> {
  const ts = stack.slack.nextTs();
  const user = SLACK_USERS[token.length % SLACK_USERS.length]!.id;
  const event = { type: "app_mention", channel, user, text: `<@UNEO> ${question(token)}`, ts, event_ts: ts };
  stack.ledger.send(token, "slack", `slack:${channel}`);
  await app.delivery.deliver(envelope(stack.slack.teamId, event));
}

/** Handling time of each answered token (ms). */
export const handling = (stack: Stack, tokens: readonly string[]): number[] =>
  tokens.flatMap((t) => {
    const s = stack.ledger.sent.get(t)!;
    return s.answers.length ? [s.answers[0]! - s.sentAt] : [];
  });
