/**
 * A crash between the Approve click and the execution, with the real process: Neo on Discord (the
 * fake, real discord.js), the real loop, the embedded executor over the fixture wallet that logs
 * every execution, real Redis. Alice's click is recorded as approved; the fake then holds the
 * approval message's "Approved" edit (a 429 with a long retry-after, so the process sits between
 * the click and the execution) and the process is SIGKILLed there. At restart the approval is
 * closed as "interrupted, not executed": buttons gone, Alice still named as the one who approved,
 * the wallet never called, a later click refused, and the audit log names Alice as the clicker.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AuditEntry } from "../../src/core/approvals/audit.js";
import { createStore } from "../../src/store/create-store.js";
import { type BotProcess, freePort, startBot } from "../app/support/bot-process.js";
import { startFakeDiscord } from "../fakes/discord/fake-discord.js";
import type { MessagePayload } from "../fakes/discord/payloads.js";
import { mcpFixturePath } from "../support/mcp-fixtures.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { startScriptedOpenAI } from "../support/scripted-openai.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const redis = await probeRedis();

type Embed = { title: string; fields: Array<{ name: string; value: string }> };
type Row = { components: Array<{ custom_id: string; label: string }> };
const embedOf = (m: MessagePayload | undefined) => (m as { embeds?: Embed[] } | undefined)?.embeds?.[0];
const rowsOf = (m: MessagePayload | undefined) => (m as { components?: Row[] } | undefined)?.components ?? [];

describe.skipIf(!redis.ok)(
  `a crash between the click and the execution${redis.reason ? ` (skipped: ${redis.reason})` : ""}`,
  () => {
    it("restart marks it interrupted, not executed, naming the clicker; nothing runs", async () => {
      const discord = await startFakeDiscord();
      cleanups.push(() => discord.close());
      const ep = await startScriptedOpenAI([]);
      cleanups.push(() => ep.close());
      // Any process, any order: a mention asks core_execute, the planner plans one transfer, a
      // turn that has a tool result answers in words; write-back learns nothing.
      ep.fallback((r) => {
        if (r.purpose === "plan")
          return {
            toolCalls: [{ name: "wallet__transfer", arguments: { to: "0xabc", amount: "5", asset: "USDC" } }],
          };
        if (r.purpose !== "turn") return { text: JSON.stringify({ conversations: [] }) };
        return r.messages.some((m) => m.role === "tool")
          ? { text: "The transfer did not run." }
          : { toolCalls: [{ name: "core_execute", arguments: { intent: "send 5 USDC to 0xabc" } }] };
      });
      const dir = mkdtempSync(join(tmpdir(), "neo-crash-click-"));
      const walletLog = join(dir, "wallet.log");
      const manifest = join(dir, "manifest.json");
      writeFileSync(
        manifest,
        JSON.stringify({
          servers: {
            wallet: {
              command: process.execPath,
              args: [mcpFixturePath("wallet")],
              env: { WALLET_LOG: walletLog },
            },
          },
        }),
      );
      const prefix = uniquePrefix("crash-click");
      const env = {
        OPENAI_BASE_URL: ep.url,
        DISCORD_TOKEN: discord.token,
        DISCORD_API_URL: discord.apiBase,
        REDIS_URL: redis.url,
        NEO_KEY_PREFIX: prefix,
        NEO_INSTANCE_ID: "crash-click",
        NEO_DATA_DIR: dir,
        NEO_MCP_MANIFEST: manifest,
      };
      const launch = async (): Promise<BotProcess> => {
        const bot = startBot({ ...env, NEO_HTTP_PORT: String(await freePort()) });
        cleanups.push(async () => {
          if (bot.child.exitCode === null) bot.kill("SIGKILL");
        });
        await bot.waitForLog((l) => l.msg === "neo started", "start-up", 60_000);
        return bot;
      };

      const first = await launch();
      const opening = await discord.say(discord.alice, discord.channel, "send 5 USDC to 0xabc", {
        mentionBot: true,
      });
      const threadId = opening.id;
      const approvalMessage = () => discord.channelMessages(threadId).find((m) => embedOf(m)?.fields);
      await discord.waitForCall(
        (c) =>
          c.method === "POST" &&
          c.writesChannel === threadId &&
          JSON.stringify(c.body).includes("neo:apv:a:"),
        "the approval prompt",
        60_000,
      );
      const prompt = approvalMessage()!;
      const approve = rowsOf(prompt)[0]!.components.find((b) => b.label === "Approve")!.custom_id;

      // Hold the "Approved" edit of the prompt: the process waits there, after the click is
      // recorded and before anything is executed.
      discord.rateLimit("PATCH", new RegExp(`^/channels/${threadId}/messages/${prompt.id}$`), 600, 1, (b) =>
        JSON.stringify(b).includes('"title":"Approved"'),
      );
      await discord.click({ user: discord.alice, message: prompt, customId: approve });
      await discord.waitForCall((c) => c.status === 429, "the held Approved edit", 30_000);
      first.kill("SIGKILL");
      await first.exit;

      const second = await launch();
      await discord.waitForCall(
        (c) =>
          c.method === "PATCH" &&
          c.path === `/channels/${threadId}/messages/${prompt.id}` &&
          c.status < 300 &&
          JSON.stringify(c.body).includes("Interrupted"),
        "the interrupted edit",
        30_000,
      );
      const shown = discord.channelMessages(threadId).find((m) => m.id === prompt.id)!;
      const embed = embedOf(shown)!;
      expect(embed.title).toBe("Interrupted — nothing was done");
      expect(rowsOf(shown)).toEqual([]);
      const field = (name: string) => embed.fields.find((f) => f.name === name)?.value ?? "";
      expect(field("Decided")).toContain(`<@${discord.alice.id}>`);
      expect(field("Note")).toContain("nothing was executed");

      // A click after the restart changes nothing and says why.
      const late = await discord.click({ user: discord.alice, message: shown, customId: approve });
      const reply = await discord.waitForCall(
        (c) => c.method === "PATCH" && c.path.includes(late) && c.status < 300,
        "the late click's reply",
        30_000,
      );
      expect(String((reply.body as { content?: string }).content)).toContain("already interrupted");
      // The resumed turn answers from the interrupted result (the model is told the outcome is unknown).
      await discord.waitForCall(
        (c) => c.writesChannel === threadId && JSON.stringify(c.body).includes("The transfer did not run."),
        "the resumed turn's answer",
        30_000,
      );
      second.kill("SIGTERM");
      expect(await second.exit).toBe(0);

      expect(existsSync(walletLog) ? readFileSync(walletLog, "utf8") : "").toBe("");
      const store = await createStore({ redisUrl: redis.url, dataDir: dir, prefix });
      cleanups.push(() => store.close());
      const audit = await store.range<AuditEntry>("approvals:audit", 0, -1);
      const alice = `discord:${discord.guildId}:${discord.alice.id}`;
      expect(audit.map((e) => e.event)).toEqual(
        expect.arrayContaining(["requested", "approved", "interrupted", "refused_click"]),
      );
      expect(audit.find((e) => e.event === "approved")?.actor).toBe(alice);
      expect(audit.find((e) => e.event === "interrupted")?.detail).toContain(`approved by ${alice}`);
      expect(audit.some((e) => e.event === "executing" || e.event === "executed")).toBe(false);
    }, 180_000);
  },
);
