/**
 * One system-under-test stack: the fake Slack Web API, the fake Discord (REST + gateway), the bench
 * model, a bench-owned redis-server, an MCP manifest, and the REAL bot process
 * (`node --import tsx src/main.ts`) configured only through its environment to use all of them.
 * The fakes' recorded calls feed the phase's ledger.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeDiscord, startFakeDiscord } from "../../test/fakes/discord/fake-discord.js";
import {
  type FakeChannel,
  type FakeSlack,
  type FakeTier,
  startFakeSlack,
} from "../../test/fakes/slack/fake-slack.js";
import { createLedger, type Ledger } from "./ledger.js";
import { type BenchModel, startBenchModel } from "./model.js";
import { observeDiscord, observeSlack } from "./observe.js";
import {
  type BenchRedis,
  benchRedis,
  freePort,
  kill,
  type Owned,
  peakRss,
  ROOT,
  startNeo,
  tempDir,
  until,
} from "./procs.js";
import { type RedisWire, startRedisWire } from "./redis-wire.js";

export const SIGNING_SECRET = "bench-signing-secret-0123456789";
export const MCP_FIXTURE = join(ROOT, "test/fixtures/mcp/paged.ts");
/** The MCP tool the model calls when a phase asks for tool use (`alias__name`). */
export const MCP_TOOL = "fx__page_one";

/** Slack's published tiers (src/adapters/slack/outbound/rules.ts): the fake flags any call beyond them. */
export const SLACK_TIERS: Record<string, FakeTier> = {
  "chat.postMessage": { limit: 3, windowMs: 3000, scope: "channel" },
  "chat.update": { limit: 50, windowMs: 60_000, scope: "workspace" },
  "chat.delete": { limit: 50, windowMs: 60_000, scope: "workspace" },
  "conversations.replies": { limit: 50, windowMs: 60_000, scope: "workspace" },
  "conversations.info": { limit: 50, windowMs: 60_000, scope: "workspace" },
  "conversations.history": { limit: 50, windowMs: 60_000, scope: "workspace" },
  "reactions.add": { limit: 50, windowMs: 60_000, scope: "workspace" },
};

export const SLACK_USERS = Array.from({ length: 10 }, (_, i) => ({
  id: `UBENCH${i}`,
  name: `user${i}`,
  display_name: `User ${i}`,
}));

export interface StackOptions {
  /** Model latency per call (ms). */
  latencyMs: number;
  /** Put the MCP fixture in the manifest. */
  mcp: boolean;
  /** Extra bot environment (limits). */
  env?: Record<string, string>;
  /** Redis keeps its data across a kill (AOF, fsync always) instead of none. */
  persistentRedis?: boolean;
  /**
   * Start a counting pass-through in front of Redis (`stack.redisWire`); a bot is started on it with
   * `startBot({ REDIS_URL: stack.redisWire.url })` (its default is Redis itself: the hop adds latency).
   */
  countRedis?: boolean;
  /** Channels the fake Slack's `conversations.info` knows (others: `channel_not_found`). */
  slackChannels?: FakeChannel[];
}

export interface Stack {
  slack: FakeSlack;
  discord: FakeDiscord;
  model: BenchModel;
  redis: BenchRedis;
  /** Set with `countRedis`: the round trips and commands the bot sent to Redis. */
  redisWire: RedisWire | null;
  ledger: Ledger;
  httpPort: number;
  eventsUrl: string;
  bot(): Owned;
  /** Highest VmHWM seen across this stack's bot processes (bytes). */
  peakRss(): number;
  /** Spawn the bot (with `extraEnv` on top) and wait until /healthz answers and Discord identified. */
  startBot(extraEnv?: Record<string, string>): Promise<void>;
  /** Calls the fakes answered, by Slack method or Discord route (ids as #), with status. */
  callCounts(): Record<string, number>;
  /** The bot's warn/error/fatal log lines, counted by message, across its processes. */
  logCounts: Map<string, number>;
  /** Selected lines of the bot's own /metrics. */
  metrics(pattern: RegExp): Promise<string[]>;
  /** SIGKILL the bot's process group (the bot and its MCP servers). */
  killBot(): Promise<void>;
  /** Run `f` when the stack closes (before its processes are killed). */
  onClose(f: () => void): void;
  close(): Promise<void>;
}

export async function startStack(o: StackOptions): Promise<Stack> {
  const dir = tempDir("stack");
  const slack = await startFakeSlack({
    teamId: "TBENCH",
    // The bot's own user too: Slack's users.info knows it (the Chat SDK looks up every mentioned user).
    users: [...SLACK_USERS, { id: "UNEO", name: "neo", display_name: "Neo", is_bot: true }],
    tiers: SLACK_TIERS,
    channels: o.slackChannels ?? [],
  });
  const discord = await startFakeDiscord();
  const model = await startBenchModel(o.latencyMs);
  const redis = await benchRedis(o.persistentRedis ? tempDir("redis") : undefined);
  await redis.start();
  const redisWire = o.countRedis ? await startRedisWire({ host: "127.0.0.1", port: redis.port }) : null;
  const ledger = createLedger();
  observeSlack(slack, ledger);
  observeDiscord(discord, ledger);
  const manifest = join(dir, "agent.json");
  const servers = o.mcp
    ? { fx: { command: process.execPath, args: ["--import", "tsx", MCP_FIXTURE], cwd: ROOT } }
    : {};
  writeFileSync(manifest, JSON.stringify({ spawnTimeoutMs: 20_000, servers }));
  const httpPort = await freePort();
  const metricsPort = await freePort();
  const env: Record<string, string> = {
    SLACK_BOT_TOKEN: "xoxb-bench-token",
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.apiUrl,
    NEO_HTTP_PORT: String(httpPort),
    NEO_METRICS_PORT: String(metricsPort),
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiBase,
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: "sk-bench-key",
    REDIS_URL: redis.url,
    NEO_MCP_MANIFEST: manifest,
    NEO_INSTANCE_ID: "bench-1",
    NEO_DATA_DIR: join(dir, "data"),
    NEO_LOG_LEVEL: "warn",
    // A hung model call fails after 5 s instead of the default 120 s (the timeout fault).
    NEO_LLM_TIMEOUT_MS: "5000",
    // Ten simulated users send hundreds of messages each: the per-user turn rate would measure
    // itself, not the harness. Fairness has its own bench (bench/fairness.bench.ts).
    NEO_USER_TURNS_PER_MINUTE: "1000000",
    NEO_USER_TURN_BURST: "1000000",
    ...o.env,
  };
  let bot: Owned | null = null;
  let peak = 0;
  const logCounts = new Map<string, number>();
  const countLogs = (p: Owned) => {
    let partial = "";
    const onData = (d: Buffer) => {
      const lines = (partial + d.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const m = /"level":(\d+).*?"msg":"((?:[^"\\]|\\.)*)"/.exec(line);
        const msg = m?.[2]?.replace(/\\"/g, "'");
        if (m && msg !== undefined && Number(m[1]) >= 40) logCounts.set(msg, (logCounts.get(msg) ?? 0) + 1);
      }
    };
    p.child.stdout?.on("data", onData);
    p.child.stderr?.on("data", onData);
  };
  const samplePeak = () => {
    if (bot?.alive()) peak = Math.max(peak, peakRss(bot.pid));
  };
  const closers: (() => void)[] = [];
  const sampler = setInterval(samplePeak, 250);
  sampler.unref();

  const stack: Stack = {
    slack,
    discord,
    model,
    redis,
    redisWire,
    ledger,
    logCounts,
    httpPort,
    eventsUrl: `http://127.0.0.1:${httpPort}/slack/events`,
    bot: () => {
      if (!bot) throw new Error("bot not started");
      return bot;
    },
    peakRss: () => {
      samplePeak();
      return peak;
    },
    callCounts() {
      const counts: Record<string, number> = {};
      const add = (k: string) => {
        counts[k] = (counts[k] ?? 0) + 1;
      };
      for (const c of slack.calls) add(`slack ${c.method} ${c.status}`);
      for (const c of discord.calls) add(`discord ${c.method} ${c.path.replace(/\d{6,}/g, "#")} ${c.status}`);
      return counts;
    },
    async metrics(pattern) {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).catch(() => null);
      const text = res ? await res.text() : "";
      return text.split("\n").filter((l) => !l.startsWith("#") && pattern.test(l));
    },
    async startBot(extraEnv = {}) {
      const identified = discord.gateway.identifies.length;
      const p = startNeo(
        "neo",
        { ...env, ...extraEnv },
        // BENCH_BOT_NODE_ARGS: extra node flags for the bot (e.g. --cpu-prof to profile it).
        process.env.BENCH_BOT_NODE_ARGS?.split(" ").filter(Boolean) ?? [],
      );
      bot = p;
      countLogs(p);
      await until(
        "the bot's /healthz and Discord IDENTIFY",
        async () => {
          if (!p.alive()) throw new Error(`bot exited during start-up:\n${p.output().slice(-3000)}`);
          if (discord.gateway.identifies.length <= identified) return false;
          const res = await fetch(`http://127.0.0.1:${httpPort}/healthz`).catch(() => null);
          return res !== null;
        },
        60_000,
      );
    },
    async killBot() {
      samplePeak();
      if (bot && process.env.BENCH_BOT_NODE_ARGS && bot.alive()) {
        // Profiling: a stop the bot handles, so node writes what its flags asked for.
        process.kill(bot.pid, "SIGTERM");
        await Promise.race([bot.exited, new Promise((r) => setTimeout(r, 10_000))]);
      }
      if (bot) await kill(bot);
    },
    onClose(f) {
      closers.push(f);
    },
    async close() {
      clearInterval(sampler);
      for (const f of closers.splice(0)) f();
      await stack.killBot();
      await redisWire?.close();
      await redis.kill();
      await slack.close();
      await discord.close();
      await model.close();
    },
  };
  return stack;
}
