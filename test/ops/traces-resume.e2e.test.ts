/**
 * A turn resumed on another instance continues the trace its first instance began: the real process
 * (instance A) takes a Discord DM, opens its turn (the journal keeps the turn span's traceparent) and
 * is SIGKILLed while the model is still answering; instance B, on the same Redis, takes the
 * conversation over when A's lease expires and finishes the turn. The receiver sees A's spans and
 * B's in one trace, B's turn span a child of A's.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type BotProcess, freePort, startBot } from "../app/support/bot-process.js";
import { startFakeDiscord, wrote } from "../fakes/discord/fake-discord.js";
import { startOtlpReceiver } from "../support/otlp-receiver.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { startScriptedOpenAI } from "../support/scripted-openai.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const redis = await probeRedis();

describe.skipIf(!redis.ok)(
  `traces across instances${redis.reason ? ` (skipped: ${redis.reason})` : ""}`,
  () => {
    it("a turn resumed after SIGKILL on another instance shows in the same trace", async () => {
      const receiver = await startOtlpReceiver();
      cleanups.push(() => receiver.close());
      const discord = await startFakeDiscord();
      cleanups.push(() => discord.close());
      // The first answer never comes (instance A dies waiting); the resumed turn's is answered.
      const ep = await startScriptedOpenAI([
        { label: "A's call", reply: { text: "never seen", delayMs: 60_000 } },
      ]);
      cleanups.push(() => ep.close());
      ep.fallback((r) =>
        r.purpose === "turn" ? { text: "resumed answer" } : { text: JSON.stringify({ conversations: [] }) },
      );
      const env = {
        OPENAI_BASE_URL: ep.url,
        DISCORD_TOKEN: discord.token,
        DISCORD_API_URL: discord.apiBase,
        REDIS_URL: redis.url,
        NEO_KEY_PREFIX: uniquePrefix("trace-resume"),
        NEO_MCP_MANIFEST: "test/fixtures/empty-manifest.json",
        NEO_LEASE_MS: "2000",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "neo",
        // Spans leave every 50 ms (the SDK's standard variable), so A's are out before it is killed.
        OTEL_BSP_SCHEDULE_DELAY: "50",
      };
      const launch = async (instance: string): Promise<BotProcess> => {
        const bot = startBot({
          ...env,
          NEO_INSTANCE_ID: instance,
          NEO_DATA_DIR: mkdtempSync(join(tmpdir(), "neo-trace-")),
          NEO_HTTP_PORT: String(await freePort()),
        });
        cleanups.push(async () => {
          if (bot.child.exitCode === null) bot.kill("SIGKILL");
        });
        await bot.waitForLog((l) => l.msg === "neo started", `${instance} start-up`, 45_000);
        return bot;
      };

      const a = await launch("instance-a");
      const dm = discord.dm(discord.bob);
      await discord.say(discord.bob, dm, "a question that outlives its instance");
      await ep.waitForRequest(1);
      // A's turn span is open (it ends with the turn); its queue wait is done and exported.
      await receiver.waitFor(
        (spans) =>
          spans.some(
            (s) => s.name === "neo.queue_wait" && s.resource["service.instance.id"] === "instance-a",
          ),
        "A's queue wait",
      );
      a.kill("SIGKILL");
      await a.exit;

      const b = await launch("instance-b");
      await discord.waitForCall(wrote("resumed answer", dm.id), "the resumed answer");
      await receiver.waitFor(
        (spans) =>
          spans.some(
            (s) => s.name === "invoke_agent Neo" && s.resource["service.instance.id"] === "instance-b",
          ),
        "B's turn span",
      );
      b.kill("SIGTERM");
      expect(await b.exit).toBe(0);

      const fromA = receiver.spans.find(
        (s) => s.name === "neo.queue_wait" && s.resource["service.instance.id"] === "instance-a",
      )!;
      const resumed = receiver.spans.find(
        (s) => s.name === "invoke_agent Neo" && s.resource["service.instance.id"] === "instance-b",
      )!;
      expect(resumed.traceId).toBe(fromA.traceId);
      // B's turn span continues A's: its parent is A's turn span (the queue wait's parent).
      expect(resumed.parentSpanId).toBe(fromA.parentSpanId);
      expect(resumed.attributes).toMatchObject({
        "neo.turn.mode": "resume",
        "neo.turn.status": "answered",
        "neo.instance": "instance-b",
      });
      // B's model call and post are in the same trace too.
      const trace = receiver.spans.filter((s) => s.traceId === fromA.traceId).map((s) => s.name);
      expect(trace).toEqual(
        expect.arrayContaining(["neo.queue_wait", "invoke_agent Neo", "chat gpt-4o", "neo.post"]),
      );
    }, 120_000);
  },
);
