/**
 * Start-up and registration: a missing Message Content intent stops start-up with one clear line;
 * `register:discord` bulk-overwrites the commands per guild (DISCORD_GUILD_ID) or globally.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { DiscordStartError, MESSAGE_CONTENT_MISSING } from "../../src/adapters/discord/index.js";
import { registerCommands } from "../../src/adapters/discord/register-commands.js";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import { type FakeDiscord, startFakeDiscord, wrote } from "../fakes/discord/fake-discord.js";
import { type Rig, startRig, until } from "./support/harness.js";

describe("Discord: start-up", () => {
  let rig: Rig | undefined;
  let fake: FakeDiscord | undefined;
  afterEach(async () => {
    setLogSink((line) => process.stdout.write(line));
    setLogLevel("silent");
    await rig?.close();
    await fake?.close();
    rig = undefined;
    fake = undefined;
  });

  it("stops with one line naming the Message Content intent when Discord refuses it (close 4014)", async () => {
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    setLogLevel("info");
    const err = await startRig({ fake: { applicationFlags: 0 } }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(DiscordStartError);
    expect(err!.message).toBe(`Discord login failed: Used disallowed intents — ${MESSAGE_CONTENT_MISSING}`);
    expect(err!.message).not.toContain("\n");
    expect(lines.some((l) => l.includes("discord adapter ready"))).toBe(false);
  });

  it("says it once when messages in Neo's thread arrive without content, though READY claimed the intent", async () => {
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    setLogLevel("info");
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script({ reply: { text: "Opened." } });
    const mention = await fake.say(fake.alice, fake.channel, "open a thread", { mentionBot: true });
    await fake.waitForCall(wrote("Opened."), "answer");
    const thread = fake.channelById(mention.id)!;
    // Without the intent Discord strips the content of messages that do not mention the bot.
    await fake.say(fake.alice, thread, "");
    await fake.say(fake.bob, thread, "");
    await until("the warning", () => lines.some((l) => l.includes("Message Content intent")));
    await fake.say(fake.bob, thread, "");
    expect(lines.filter((l) => l.includes("Message Content intent"))).toHaveLength(1);
    expect(ep.requests).toHaveLength(1);
  });

  it("says nothing about intents when the app has Message Content", async () => {
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    setLogLevel("info");
    rig = await startRig();
    expect(lines.some((l) => l.includes("Message Content intent"))).toBe(false);
    expect(lines.some((l) => l.includes("discord adapter ready"))).toBe(true);
  });

  it("registers /neo and /neo-admin per guild and globally", async () => {
    fake = await startFakeDiscord();
    const guild = await registerCommands({
      token: fake.token,
      appId: fake.appId,
      guildId: fake.guildId,
      apiUrl: fake.apiBase,
    });
    expect(guild).toEqual(["neo", "neo-admin"]);
    const global = await registerCommands({ token: fake.token, appId: fake.appId, apiUrl: fake.apiBase });
    expect(global).toEqual(["neo", "neo-admin"]);
    const puts = fake.calls.filter((c) => c.method === "PUT");
    expect(puts.map((c) => c.path)).toEqual([
      `/applications/${fake.appId}/guilds/${fake.guildId}/commands`,
      `/applications/${fake.appId}/commands`,
    ]);
    expect(puts.every((c) => c.authed)).toBe(true);
  });

  it("npm run register:discord works as a script against DISCORD_API_URL", async () => {
    fake = await startFakeDiscord();
    const run = promisify(execFile);
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "src/adapters/discord/register-commands.ts"],
      {
        env: {
          PATH: process.env.PATH,
          DISCORD_TOKEN: fake.token,
          DISCORD_APP_ID: fake.appId,
          DISCORD_GUILD_ID: fake.guildId,
          DISCORD_API_URL: fake.apiBase,
          NEO_LOG_LEVEL: "info",
        },
      },
    );
    expect(stdout).toContain("Discord commands registered");
    expect(stdout).not.toContain(fake.token);
    expect(
      fake.calls.some((c) => c.method === "PUT" && c.path.includes(`/guilds/${fake!.guildId}/commands`)),
    ).toBe(true);
  });
});
