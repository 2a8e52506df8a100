/**
 * Discord dispatches nothing to a bot that is down and replays nothing to a new session, so what
 * users send to Neo's conversations while the process is dead must be fetched when it is back: the
 * real process is SIGKILLed, a DM and a thread follow-up arrive, a new process starts and answers
 * each once, and nothing it had already answered is answered again.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RecordedCall, startFakeDiscord, wrote } from "../fakes/discord/fake-discord.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { startScriptedOpenAI } from "../support/scripted-openai.js";
import { type BotProcess, freePort, startBot } from "./support/bot-process.js";
import { answerEveryTurn } from "./support/echo-model.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const redis = await probeRedis();

describe.skipIf(!redis.ok)(
  `a bot restart under Discord${redis.reason ? ` (skipped: ${redis.reason})` : ""}`,
  () => {
    it("answers, once, the messages sent to its conversations while the process was dead", async () => {
      const discord = await startFakeDiscord();
      cleanups.push(() => discord.close());
      const ep = await startScriptedOpenAI([]);
      cleanups.push(() => ep.close());
      answerEveryTurn(ep);
      const env = {
        OPENAI_BASE_URL: ep.url,
        DISCORD_TOKEN: discord.token,
        DISCORD_API_URL: discord.apiBase,
        REDIS_URL: redis.url,
        NEO_KEY_PREFIX: uniquePrefix("catch-up"),
        NEO_INSTANCE_ID: "catch-up",
        NEO_DATA_DIR: mkdtempSync(join(tmpdir(), "neo-catch-up-")),
        NEO_MCP_MANIFEST: "test/fixtures/empty-manifest.json",
      };
      const launch = async (): Promise<BotProcess> => {
        const bot = startBot({ ...env, NEO_HTTP_PORT: String(await freePort()) });
        cleanups.push(async () => {
          if (bot.child.exitCode === null) bot.kill("SIGKILL");
        });
        await bot.waitForLog((l) => l.msg === "neo started", "start-up");
        return bot;
      };
      const answered = (channelId: string, text: string) => (c: RecordedCall) =>
        wrote(`answer to: ${text}`, channelId)(c);

      const first = await launch();
      const dm = discord.dm(discord.bob);
      await discord.say(discord.bob, dm, "before the crash");
      const opening = await discord.say(discord.alice, discord.channel, "thread question", {
        mentionBot: true,
      });
      const threadId = opening.id;
      await discord.waitForCall(answered(dm.id, "before the crash"), "DM answer");
      await discord.waitForCall(answered(threadId, "thread question"), "thread answer");
      // Both turns closed in the log (a kill between a post and its turn's end re-posts on restart).
      await first.waitForLog(
        () => first.logLines().filter((l) => l.msg === "turn ended").length === 2,
        "both turns ended",
      );

      first.kill("SIGKILL");
      await first.exit;
      await discord.say(discord.bob, dm, "sent while Neo was down");
      await discord.say(discord.alice, discord.channelById(threadId)!, "follow-up while Neo was down");
      const missedMention = await discord.say(
        discord.carol,
        discord.channel,
        "new question while Neo was down",
        {
          mentionBot: true,
        },
      );

      const second = await launch();
      await discord.waitForCall(answered(dm.id, "sent while Neo was down"), "DM caught up");
      await discord.waitForCall(answered(threadId, "follow-up while Neo was down"), "thread caught up");
      // A mention in the channel, missed while down, opens its thread late and is answered there.
      await discord.waitForCall(
        answered(missedMention.id, "new question while Neo was down"),
        "mention caught up",
      );
      second.kill("SIGTERM");
      expect(await second.exit).toBe(0);

      for (const [channel, text] of [
        [dm.id, "before the crash"],
        [threadId, "thread question"],
        [dm.id, "sent while Neo was down"],
        [threadId, "follow-up while Neo was down"],
        [missedMention.id, "new question while Neo was down"],
      ] as const) {
        // What stands in the channel (an answer is written by edits as it streams).
        const shown = discord.channelMessages(channel).filter((m) => m.content === `answer to: ${text}`);
        expect(shown, text).toHaveLength(1);
      }
      // Two processes, five answers each written at Discord's pace (1.5 s per write per channel).
    }, 60_000);
  },
);
