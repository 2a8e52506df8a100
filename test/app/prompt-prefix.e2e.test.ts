/**
 * Prompt caches reuse the longest prefix a request shares with an earlier one, so each request of a
 * thread must extend the last: the same system text before the transcript, the transcript only
 * growing; what changes per request (the turn's pinned block, retrieved memory, the budget stat)
 * comes after it. Twenty turns of one Discord DM through the real process, which is SIGKILLed while
 * the eleventh is waiting for the model and started again: the resumed turn and every turn after it
 * still extend the requests before the kill. (The scripted endpoint checks the same on every
 * request and refuses a violation with a 400.)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { startFakeDiscord, wrote } from "../fakes/discord/fake-discord.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedRequest, startScriptedOpenAI } from "../support/scripted-openai.js";
import { turnsStarted } from "../support/turn-started.js";
import { type BotProcess, freePort, startBot } from "./support/bot-process.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const redis = await probeRedis();
const TURNS = 20;
const KILLED_AT = 11;

const lastUser = (r: ScriptedRequest) =>
  String(r.messages.filter((m) => m.role === "user").pop()?.content ?? "");

describe.skipIf(!redis.ok)(`request prefixes${redis.reason ? ` (skipped: ${redis.reason})` : ""}`, () => {
  it("each request of a thread extends the last, across a SIGKILL and the resumed turn", async () => {
    const discord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    // The request of question 11 is never answered: the process dies waiting for it.
    const ep = await startScriptedOpenAI([
      {
        label: "question 11, never answered",
        match: (r) => r.purpose === "turn" && lastUser(r).endsWith(`question ${KILLED_AT}`),
        reply: { text: "never seen", delayMs: 120_000 },
      },
    ]);
    cleanups.push(() => ep.close());
    ep.fallback((r) =>
      r.purpose === "turn" ? { text: `answer ${r.index}` } : { text: JSON.stringify({ conversations: [] }) },
    );
    const prefix = uniquePrefix("prefix");
    // What the bot wrote, read as it is (to wait for a turn's opening write before the kill).
    const store = await createStore({
      redisUrl: redis.url,
      prefix,
      dataDir: mkdtempSync(join(tmpdir(), "neo-prefix-read-")),
    });
    cleanups.push(() => store.close());
    const env = {
      OPENAI_BASE_URL: ep.url,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      REDIS_URL: redis.url,
      NEO_KEY_PREFIX: prefix,
      // The same instance id after the restart: its own leases are freed at once.
      NEO_INSTANCE_ID: "prefix",
      NEO_DATA_DIR: mkdtempSync(join(tmpdir(), "neo-prefix-")),
      NEO_MCP_MANIFEST: "test/fixtures/empty-manifest.json",
      // A small window, so the budget stat ("[context: N% used]") moves as the thread grows, as
      // retrieved memory and the pinned block move in real threads; far from compaction (80 %).
      NEO_CONTEXT_WINDOW: "4000",
    };
    const launch = async (): Promise<BotProcess> => {
      const bot = startBot({ ...env, NEO_HTTP_PORT: String(await freePort()) });
      cleanups.push(async () => {
        if (bot.child.exitCode === null) bot.kill("SIGKILL");
      });
      await bot.waitForLog((l) => l.msg === "neo started", "start-up", 45_000);
      return bot;
    };
    const dm = discord.dm(discord.bob);
    const turnRequests = () => ep.requests.filter((r) => r.purpose === "turn");
    const answered = wrote((text) => text.startsWith("answer "), dm.id);
    const ask = async (n: number) => {
      const before = discord.calls.length;
      await discord.say(discord.bob, dm, `question ${n}`);
      await discord.waitForCall(
        (c) => discord.calls.indexOf(c) >= before && answered(c),
        `answer to question ${n}`,
      );
    };

    let bot = await launch();
    for (let n = 1; n < KILLED_AT; n++) await ask(n);
    await discord.say(discord.bob, dm, `question ${KILLED_AT}`);
    // Killed only once question 11's own request is in (the previous turn's write-back may come first).
    for (let n = ep.requests.length + 1; ; n++) {
      const r = await ep.waitForRequest(n);
      if (r.purpose === "turn" && lastUser(r).endsWith(`question ${KILLED_AT}`)) break;
    }
    // Its opening write goes beside that request: killed once it is in, the turn is under way.
    await turnsStarted(store, KILLED_AT);
    bot.kill("SIGKILL");
    await bot.exit;
    const beforeRestart = discord.calls.length;
    bot = await launch();
    // The resumed turn answers question 11.
    await discord.waitForCall(
      (c) => discord.calls.indexOf(c) >= beforeRestart && answered(c),
      "the resumed answer",
    );
    for (let n = KILLED_AT + 1; n <= TURNS; n++) await ask(n);
    bot.kill("SIGTERM");
    expect(await bot.exit).toBe(0);

    const requests = turnRequests();
    expect(requests.length).toBeGreaterThanOrEqual(TURNS + 1);
    expect(new Set(requests.map((r) => r.conversation)).size).toBe(1);
    // Every request carries the same system text before its transcript, and its transcript starts
    // with the previous request's whole transcript, the one that died with the process included.
    for (let i = 1; i < requests.length; i++) {
      const [prev, next] = [requests[i - 1]!, requests[i]!];
      expect(next.head, `request #${next.index}`).toBe(prev.head);
      expect(next.messages.slice(0, prev.messages.length), `request #${next.index}`).toEqual(prev.messages);
      expect(next.messages.length).toBeGreaterThan(prev.messages.length);
    }
    // What changes per request comes after the transcript.
    const wire = requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    expect(wire[0]!.role).toBe("system");
    expect(wire.at(-1)!.role).toBe("system");
    expect(String(wire.at(-1)!.content)).toMatch(/\[context: \d+% used\]$/);
    expect(ep.violations).toEqual([]);
  }, 240_000);
});
