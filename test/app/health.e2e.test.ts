/**
 * `/healthz` of the real process when things are wrong: Discord only (so the ops routes get their
 * own server), a test-owned `redis-server` that is not there at start-up and is later killed and
 * restarted, an MCP server that never starts, and a model endpoint that does not answer.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeDiscord } from "../fakes/discord/fake-discord.js";
import { mcpFixturePath } from "../support/mcp-fixtures.js";
import { killRedisServer, startRedisServer } from "../support/redis-server.js";
import { type BotProcess, freePort, startBot } from "./support/bot-process.js";

interface Report {
  status: string;
  checks: Record<string, { ok: boolean; detail?: unknown }>;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function healthz(port: number): Promise<{ status: number; report: Report }> {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`);
  return { status: res.status, report: (await res.json()) as Report };
}

/** Poll /healthz until `cond` holds (the store notices Redis coming and going on its own). */
async function healthUntil(port: number, cond: (r: Report) => boolean, what: string): Promise<Report> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { report } = await healthz(port);
    if (cond(report)) return report;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(report)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("/healthz of the bot process", () => {
  it("waits for Redis at start-up, then reports each broken part and the store going and coming back", async () => {
    const discord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    const dir = mkdtempSync(join(tmpdir(), "neo-health-"));
    const manifest = join(dir, "agents.json");
    writeFileSync(
      manifest,
      JSON.stringify({
        spawnTimeoutMs: 1000,
        servers: {
          broken: {
            command: process.execPath,
            args: [mcpFixturePath("never-starts")],
          },
        },
      }),
    );
    const [redisPort, httpPort, deadModelPort] = [await freePort(), await freePort(), await freePort()];
    const bot: BotProcess = startBot({
      OPENAI_BASE_URL: `http://127.0.0.1:${deadModelPort}/v1`,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      NEO_HTTP_PORT: String(httpPort),
      NEO_DATA_DIR: dir,
      NEO_MCP_MANIFEST: manifest,
    });
    cleanups.push(async () => {
      if (bot.child.exitCode === null) bot.kill("SIGKILL");
    });

    // No Redis yet: the bot says it is waiting and takes nothing; once Redis answers it starts.
    await bot.waitForLog(
      (l) => l.msg === "store unavailable at start-up; waiting for it",
      "waiting for Redis",
    );
    let redis = await startRedisServer(redisPort);
    cleanups.push(() => killRedisServer(redis));
    await bot.waitForLog((l) => l.msg === "neo started", "start-up");

    const first = await healthz(httpPort);
    expect(first.status).toBe(503);
    expect(first.report.status).toBe("degraded");
    expect(first.report.checks.store?.ok).toBe(true);
    expect(first.report.checks.discord?.ok).toBe(true);
    expect(first.report.checks.model).toMatchObject({
      ok: false,
      detail: { url: `http://127.0.0.1:${deadModelPort}/v1/models` },
    });
    expect(first.report.checks.mcp).toMatchObject({
      ok: false,
      detail: { servers: [{ server: "broken", status: "failed" }], warnings: [{ server: "broken" }] },
    });
    expect(JSON.stringify(first.report.checks.mcp)).toContain("did not start within 1000 ms");

    // Redis killed: the store check says so; restarted on the same port: it recovers by itself.
    await killRedisServer(redis);
    await healthUntil(httpPort, (r) => r.checks.store?.ok === false, "store down");
    redis = await startRedisServer(redisPort);
    await healthUntil(httpPort, (r) => r.checks.store?.ok === true, "store back");

    bot.kill("SIGTERM");
    expect(await bot.exit).toBe(0);
  });
});
