/**
 * Start-up as an operator sees it, the real process (`src/main.ts`): a service started with no
 * platform configured fails with one line instead of exiting 0 (which `restart: unless-stopped`
 * would loop on silently); a start-up failure is printed once; the console chat started with the
 * shipped `.env.example` logs warnings only.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeDiscord } from "../fakes/discord/fake-discord.js";
import { startScriptedOpenAI } from "../support/scripted-openai.js";
import { startBot } from "./support/bot-process.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const dataDir = () => mkdtempSync(join(tmpdir(), "neo-startup-"));

/** `node --import tsx src/main.ts` with stdin from /dev/null, as Docker or systemd start it. */
function runDetached(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NEO_ENV_FILE: "off", ...env },
    cwd: process.cwd(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("start-up", () => {
  it("with no platform token and nobody to type (stdin is /dev/null), exits 1 with one line", async () => {
    const r = await runDetached({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1", NEO_DATA_DIR: dataDir() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([
      "SLACK_BOT_TOKEN / DISCORD_TOKEN: neither is set, and the console chat needs someone to type (stdin is not a terminal); set a platform token",
    ]);
  });

  it("a platform that refuses Neo at start-up is reported once, on stderr, and the exit code is 1", async () => {
    const discord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    const bot = startBot({
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      DISCORD_TOKEN: "not-the-fake-token",
      DISCORD_API_URL: discord.apiBase,
      NEO_DATA_DIR: dataDir(),
      NEO_HTTP_PORT: "0",
    });
    cleanups.push(async () => bot.kill("SIGKILL"));
    expect(await bot.exit).toBe(1);
    const out = bot.output();
    const mentions = out.split("\n").filter((l) => l.includes("Discord login failed"));
    expect(mentions, out).toHaveLength(1);
    expect(mentions[0]).toMatch(/^neo: Discord login failed: /);
  });

  it("the console chat with the shipped .env.example prints answers, and no info-level log lines", async () => {
    const ep = await startScriptedOpenAI([{ reply: { text: "Hello from the console." } }]);
    cleanups.push(() => ep.close());
    ep.fallback(() => ({ text: JSON.stringify({ conversations: [] }) }));
    const envFile = join(dataDir(), "env");
    copyFileSync(".env.example", envFile);
    const bot = startBot({ NEO_ENV_FILE: envFile, OPENAI_BASE_URL: ep.url, NEO_DATA_DIR: dataDir() });
    cleanups.push(async () => bot.kill("SIGKILL"));
    bot.child.stdin.write("hi\n");
    bot.child.stdin.end();
    expect(await bot.exit).toBe(0);
    const out = bot.output();
    expect(out).toContain("Hello from the console.");
    const logLevels = out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => (JSON.parse(l) as { level: number }).level);
    expect(
      logLevels.filter((level) => level < 40),
      out,
    ).toEqual([]);
  });
});
