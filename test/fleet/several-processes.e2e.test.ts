/**
 * Several Neo processes on one host, as an operator starts them: only `NEO_HTTP_PORT` and
 * `NEO_INSTANCE_ID` set apart, metrics settings left at their defaults. Every process serves
 * `/healthz` on its port and `/metrics` on its port + 6464 (before, every process bound the default
 * 9464 and the second died with EADDRINUSE).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { METRICS_PORT_OFFSET } from "../../src/app/process-place.js";
import { type BotProcess, freePort, startBot } from "../app/support/bot-process.js";
import { startFakeDiscord } from "../fakes/discord/fake-discord.js";
import { portFree } from "../support/free-port.js";
import { startScriptedOpenAI } from "../support/scripted-openai.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

/** A free HTTP port whose default metrics port (+6464) is free too. */
async function freePortPair(): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (p + METRICS_PORT_OFFSET <= 65_535 && (await portFree(p + METRICS_PORT_OFFSET))) return p;
  }
}

describe("several processes on one host", () => {
  it("three processes with default metrics settings all start and serve /healthz and /metrics", {
    timeout: 180_000,
  }, async () => {
    const discord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    const ep = await startScriptedOpenAI([]);
    cleanups.push(() => ep.close());
    const bots: Array<{ bot: BotProcess; port: number }> = [];
    for (const id of ["host-a", "host-b", "host-c"]) {
      const port = await freePortPair();
      const bot = startBot({
        OPENAI_BASE_URL: ep.url,
        DISCORD_TOKEN: discord.token,
        DISCORD_API_URL: discord.apiBase,
        NEO_DATA_DIR: mkdtempSync(join(tmpdir(), "neo-several-")),
        NEO_MCP_MANIFEST: "test/fixtures/empty-manifest.json",
        NEO_HTTP_PORT: String(port),
        NEO_INSTANCE_ID: id,
        // The default: unset (startBot pins it to 0 otherwise).
        NEO_METRICS_PORT: "",
      });
      cleanups.push(async () => bot.kill("SIGKILL"));
      bots.push({ bot, port });
    }
    await Promise.all(
      bots.map(({ bot }) => bot.waitForLog((l) => l.msg === "neo started", "neo started", 150_000)),
    );
    for (const { bot, port } of bots) {
      const started = bot.logLines().find((l) => l.msg === "neo started")!;
      expect([started.port, started.metricsPort]).toEqual([port, port + METRICS_PORT_OFFSET]);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBeLessThan(600);
      const metrics = await fetch(`http://127.0.0.1:${port + METRICS_PORT_OFFSET}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain("neo_turns_total");
    }
    expect(bots.map(({ bot }) => bot.logLines().find((l) => l.msg === "neo started")!.instanceId)).toEqual([
      "host-a",
      "host-b",
      "host-c",
    ]);
    for (const { bot } of bots) bot.kill("SIGTERM");
    expect(await Promise.all(bots.map(({ bot }) => bot.exit))).toEqual([0, 0, 0]);
  });
});
