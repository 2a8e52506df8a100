/**
 * The real process end to end: `src/main.ts` with Slack and Discord tokens set, against the fake
 * Slack Web API, the fake Discord, the scripted OpenAI endpoint (behind basic credentials written
 * into OPENAI_BASE_URL) and a password-protected redis-server. It answers on both platforms, serves
 * /healthz on NEO_HTTP_PORT (Slack's receiver port) and /metrics only on NEO_METRICS_PORT behind its
 * bearer token, stops cleanly on SIGTERM, and no configured secret, URL password included, ever
 * appears in anything it printed or served. A malformed REDIS_URL stops start-up without its password.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeDiscord, wrote } from "../fakes/discord/fake-discord.js";
import { startFakeSlack } from "../fakes/slack/fake-slack.js";
import { createSlackSender } from "../fakes/slack/signed-request.js";
import { envelope, mention, userTs } from "../slack/support/harness.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { killRedisServer, startRedisServer } from "../support/redis-server.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { type BotProcess, freePort, startBot } from "./support/bot-process.js";

const SECRETS = {
  SLACK_BOT_TOKEN: "xoxb-111-222-SECRETbottoken9f8e",
  SLACK_SIGNING_SECRET: "signing-SECRET-3c4d5e6f7a8b9c0d",
  NEO_METRICS_TOKEN: "metrics-SECRET-7d6c5b4a39281706",
};
/** Passwords written into URLs: REDIS_URL's and OPENAI_BASE_URL's (basic auth to a model proxy). */
const REDIS_PASSWORD = "redis-SECRET-pw-0a1b2c3d4e";
const MODEL_PASSWORD = "model-SECRET-pw-9z8y7x6w5v";
const nothingDurable = JSON.stringify({ conversations: [] });
const isTurn = (r: ScriptedRequest) => r.purpose === "turn";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function metricValue(text: string, name: string, labels = ""): Promise<number> {
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name}${labels} `) || l.startsWith(`${name}${labels}{`));
  return line ? Number(line.split(" ").pop()) : 0;
}

/** On failure, show what the bot printed. */
async function withOutput<T>(bot: BotProcess, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- bot output ---\n${bot.output().slice(-6000)}`);
  }
}

const redis = await probeRedis();

describe.skipIf(!redis.ok)(
  `the bot process (npm start with platform tokens)${redis.reason ? ` (skipped: ${redis.reason})` : ""}`,
  () => {
    it("answers on Slack and Discord, serves /healthz and /metrics, stops on SIGTERM, never prints a secret", async () => {
      const slack = await startFakeSlack({
        teamId: "T0001",
        users: [{ id: "UANN", name: "ann", display_name: "Ann" }],
      });
      cleanups.push(() => slack.close());
      const discord = await startFakeDiscord();
      cleanups.push(() => discord.close());
      const ep: ScriptedOpenAI = await startScriptedOpenAI([]);
      cleanups.push(() => ep.close());
      ep.fallback((r) => (r.purpose === "writeback" ? { text: nothingDurable } : { text: "unexpected" }));
      const lastUser = (r: ScriptedRequest) =>
        String(r.messages.filter((m) => m.role === "user").pop()?.content ?? "");
      ep.script(
        {
          label: "slack answer",
          match: (r) => isTurn(r) && lastUser(r).includes("hi from slack"),
          reply: { text: "Hello from Neo on Slack." },
        },
        {
          label: "discord answer",
          match: (r) => isTurn(r) && lastUser(r).includes("hello from discord"),
          reply: { text: "Hello from Neo on Discord." },
        },
      );
      const [port, metricsPort, redisPort] = [await freePort(), await freePort(), await freePort()];
      const privateRedis = await startRedisServer(redisPort, REDIS_PASSWORD);
      cleanups.push(() => killRedisServer(privateRedis));
      const secrets = {
        ...SECRETS,
        DISCORD_TOKEN: discord.token,
        REDIS_PASSWORD,
        MODEL_PASSWORD,
      };
      const bot: BotProcess = startBot({
        ...SECRETS,
        DISCORD_TOKEN: discord.token,
        OPENAI_BASE_URL: ep.url.replace("http://", `http://neo:${MODEL_PASSWORD}@`),
        SLACK_API_URL: slack.apiUrl,
        DISCORD_API_URL: discord.apiBase,
        REDIS_URL: `redis://default:${REDIS_PASSWORD}@127.0.0.1:${redisPort}`,
        NEO_KEY_PREFIX: uniquePrefix("process-e2e"),
        NEO_DATA_DIR: mkdtempSync(join(tmpdir(), "neo-e2e-")),
        NEO_HTTP_PORT: String(port),
        NEO_METRICS_PORT: String(metricsPort),
        NEO_INSTANCE_ID: "e2e",
        NEO_LOG_LEVEL: "debug",
      });
      cleanups.push(async () => {
        if (bot.child.exitCode === null) bot.kill("SIGKILL");
      });
      await bot.waitForLog((l) => l.msg === "neo started", "start-up");
      const base = `http://127.0.0.1:${port}`;

      // Health: every component reported, all ok (the model through its basic credentials).
      const health = await fetch(`${base}/healthz`);
      const healthText = await health.text();
      const report = JSON.parse(healthText) as { status: string; checks: Record<string, { ok: boolean }> };
      expect(Object.keys(report.checks).sort()).toEqual(["discord", "mcp", "model", "slack", "store"]);
      expect(report).toMatchObject({
        status: "ok",
        checks: { model: { detail: { url: `${ep.url}/models` } } },
      });
      expect(health.status).toBe(200);

      // Slack: a signed mention is answered in its thread; a forged one is refused.
      const sender = createSlackSender(`${base}/slack/events`, SECRETS.SLACK_SIGNING_SECRET);
      const ts = userTs();
      expect((await sender.event(envelope(mention("C1", "UANN", "hi from slack", { ts })))).status).toBe(200);
      const forged = await sender.event(envelope(mention("C1", "UANN", "hi again")), { secret: "wrong" });
      expect(forged.status).toBe(401);
      await withOutput(
        bot,
        // Posted whole or streamed: what stands in the thread is the answer.
        slack.waitFor(
          () => slack.messages("C1", ts).some((m) => m.text === "Hello from Neo on Slack."),
          "Slack answer",
        ),
      );
      expect(slack.messages("C1", ts).find((m) => m.text === "Hello from Neo on Slack.")?.thread_ts).toBe(ts);

      // Discord: a DM is answered in the DM.
      const dm = discord.dm(discord.alice);
      await discord.say(discord.alice, dm, "hello from discord");
      await discord.waitForCall(wrote("Hello from Neo on Discord.", dm.id), "Discord answer");

      // A turn is counted and logged once it has ended, just after its answer is posted.
      await bot.waitForLog(
        () => bot.logLines().filter((l) => l.msg === "turn ended").length === 2,
        "both turns ended",
      );

      // Metrics: not on the public port; on their own port, only with the bearer token.
      expect((await fetch(`${base}/metrics`)).status).toBe(404);
      const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      expect((await fetch(metricsUrl)).status).toBe(401);
      expect(
        (await fetch(metricsUrl, { headers: { authorization: "Bearer wrong-token-of-some-length" } })).status,
      ).toBe(401);
      const metrics = await fetch(metricsUrl, {
        headers: { authorization: `Bearer ${SECRETS.NEO_METRICS_TOKEN}` },
      });
      expect(metrics.status).toBe(200);
      // In Prometheus text: the turns and the inbound messages of both platforms are counted.
      expect(metrics.headers.get("content-type")).toMatch(/^text\/plain/);
      const text = await metrics.text();
      for (const name of [
        "neo_turns_total",
        "neo_steps_total",
        "neo_tool_calls_total",
        "neo_model_latency_seconds",
        "neo_model_tokens_total",
        "neo_compactions_total",
        "neo_writeback_queue_depth",
        "neo_writeback_dropped_total",
        "neo_writeback_unread_total",
        "neo_approvals_total",
        "neo_queue_wait_seconds",
        "neo_platform_rate_limited_total",
        "neo_inbound_messages_total",
        "neo_process_resident_memory_bytes",
      ]) {
        expect(text, name).toContain(`# TYPE ${name} `);
      }
      expect(await metricValue(text, "neo_steps_total")).toBe(2);
      // Each platform's answer timed from its message's arrival; the store (Redis) answering.
      for (const platform of ["slack", "discord"]) {
        expect(
          await metricValue(text, "neo_answer_latency_seconds_count", `{platform="${platform}"}`),
          platform,
        ).toBe(1);
      }
      expect(await metricValue(text, "neo_store_up")).toBe(1);
      expect(await metricValue(text, "neo_turns_total", '{status="answered"}')).toBe(2);
      for (const platform of ["slack", "discord"]) {
        expect(
          await metricValue(
            text,
            "neo_inbound_messages_total",
            `{platform="${platform}",disposition="accepted"}`,
          ),
          platform,
        ).toBe(1);
      }
      expect(
        await metricValue(text, "neo_model_tokens_total", '{model="gpt-4o",kind="prompt"}'),
      ).toBeGreaterThan(0);

      // One log line per inbound message and per turn, each with its conversation key.
      const lines = bot.logLines();
      const inbound = lines.filter((l) => l.msg === "inbound" && l.disposition === "accepted");
      const turns = lines.filter((l) => l.msg === "turn ended");
      expect(inbound.map((l) => String(l.conversation).split(":")[0]).sort()).toEqual(["discord", "slack"]);
      expect(turns.map((l) => l.conversation).sort()).toEqual(inbound.map((l) => l.conversation).sort());

      // SIGTERM: a clean stop, exit code 0.
      bot.kill("SIGTERM");
      expect(await bot.exit).toBe(0);
      expect(bot.logLines().some((l) => l.msg === "shutting down")).toBe(true);

      // Nothing the process printed or served carries a configured secret; no label names a user or thread.
      const everything = bot.output();
      expect(everything.length).toBeGreaterThan(1000);
      for (const [name, value] of Object.entries(secrets)) {
        expect(everything.includes(value), `${name} appears in the output`).toBe(false);
        expect(healthText.includes(value), `${name} appears in /healthz`).toBe(false);
        expect(text.includes(value), `${name} appears in /metrics`).toBe(false);
      }
      expect(text).not.toMatch(/\b(user|conversation|thread|channel)="/);
      for (const id of ["UANN", discord.alice.id, dm.id, ts]) expect(text, id).not.toContain(id);
      // Every request the bot made to the model kept the protocol's invariants; both answers were used.
      ep.verify();
      const basic = `Basic ${Buffer.from(`neo:${MODEL_PASSWORD}`).toString("base64")}`;
      expect(ep.requests.every((r) => r.authorization === basic)).toBe(true);
    });

    it("stops on a malformed REDIS_URL with one line that names it and not its password", async () => {
      const bot = startBot({
        OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
        DISCORD_TOKEN: "discord-token-unused",
        REDIS_URL: `redis://default:${REDIS_PASSWORD}@127.0.0.1:99999`,
      });
      expect(await bot.exit).toBe(1);
      const out = bot.output();
      expect(out.trim()).toBe(
        "REDIS_URL: must be a URL (with REDIS_CLUSTER=true, comma-separated URLs) (the value given)",
      );
      expect(out).not.toContain(REDIS_PASSWORD);
    });
  },
);
