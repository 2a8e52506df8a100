/**
 * Discord never redelivers a message, so a Redis outage must not lose one: the real process, on a
 * test-owned `redis-server` that is killed and restarted empty, holds the messages that arrive
 * meanwhile and answers each once when Redis is back, including a follow-up in a thread Neo opened
 * before the outage (known by its owner, since the restarted Redis has no record of it).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RecordedCall, startFakeDiscord, wrote } from "../fakes/discord/fake-discord.js";
import { killRedisServer, startRedisServer } from "../support/redis-server.js";
import { startScriptedOpenAI } from "../support/scripted-openai.js";
import { type BotProcess, freePort, startBot } from "./support/bot-process.js";
import { answerEveryTurn } from "./support/echo-model.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

describe("a Redis outage under Discord", () => {
  it("holds the messages that arrive while Redis is down and answers each once when it is back", async () => {
    const discord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    // Redis comes back empty: the endpoint records violations (instead of refusing them) so the
    // test can say which; there must be none.
    const ep = await startScriptedOpenAI([], { onViolation: "record" });
    cleanups.push(() => ep.close());
    answerEveryTurn(ep);
    const redisPort = await freePort();
    let redis = await startRedisServer(redisPort);
    cleanups.push(() => killRedisServer(redis));
    const bot: BotProcess = startBot({
      OPENAI_BASE_URL: ep.url,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      NEO_HTTP_PORT: String(await freePort()),
      NEO_DATA_DIR: mkdtempSync(join(tmpdir(), "neo-outage-")),
      NEO_MCP_MANIFEST: "test/fixtures/empty-manifest.json",
    });
    cleanups.push(async () => {
      if (bot.child.exitCode === null) bot.kill("SIGKILL");
    });
    await bot.waitForLog((l) => l.msg === "neo started", "start-up");

    // Before the outage: a mention opens a thread and is answered there.
    const opening = await discord.say(discord.alice, discord.channel, "first question", { mentionBot: true });
    const threadId = opening.id;
    await discord.waitForCall((c) => wrote("answer to: first question", threadId)(c), "answer in the thread");

    // Redis dies; a DM and a thread follow-up arrive; Redis comes back with nothing in it.
    await killRedisServer(redis);
    const dm = discord.dm(discord.bob);
    await discord.say(discord.bob, dm, "asked during the outage");
    await discord.say(discord.alice, discord.channelById(threadId)!, "follow-up during the outage");
    await bot.waitForLog((l) => l.msg === "store unavailable; holding Discord messages", "messages held");
    redis = await startRedisServer(redisPort);

    const dmAnswer = (c: RecordedCall) => wrote("answer to: asked during the outage", dm.id)(c);
    const threadAnswer = (c: RecordedCall) => wrote("answer to: follow-up during the outage", threadId)(c);
    await discord.waitForCall(dmAnswer, "DM answered after the outage");
    await discord.waitForCall(threadAnswer, "thread follow-up answered after the outage");
    await bot.waitForLog((l) => l.msg === "store back; held Discord messages handled", "queue drained");

    bot.kill("SIGTERM");
    expect(await bot.exit).toBe(0);
    // Each exactly once (nothing was retried into a second answer).
    // What stands in each channel (an answer is written by edits as it streams).
    const shown = (channel: string, text: string) =>
      discord.channelMessages(channel).filter((m) => m.content === text);
    expect(shown(dm.id, "answer to: asked during the outage")).toHaveLength(1);
    expect(shown(threadId, "answer to: follow-up during the outage")).toHaveLength(1);
    // The thread's transcript survived the empty Redis (the process held it and reseeded the log):
    // the follow-up's request still carries the first exchange, and extends it (no violation).
    const followUp = ep.requests.find((r) =>
      r.messages.some((m) => JSON.stringify(m.content).includes("follow-up during the outage")),
    );
    expect(JSON.stringify(followUp?.messages)).toContain("first question");
    expect(ep.violations).toEqual([]);
  });
});
