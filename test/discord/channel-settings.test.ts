/**
 * `/neo-admin channel …` on Discord: each setting changes what the next turn in that channel does.
 * A real discord.js Client against the fake Discord (gateway + REST), the real conversations layer
 * and loop, the real openai SDK against the validating scripted endpoint, the real gate MCP server,
 * settings in the rig's file store. An ignored message leaves a debug line saying why; the tests
 * wait for it instead of sleeping.
 */
import { afterEach, describe, expect, it } from "vitest";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import type { RecordedCall } from "../fakes/discord/fake-discord.js";
import { type Rig, startRig } from "./support/harness.js";

const body = (c: RecordedCall) => c.body as Record<string, unknown>;

async function admin(rig: Rig, setting?: string, value?: string): Promise<string> {
  const options = [
    ...(setting ? [{ name: "setting", type: 3, value: setting }] : []),
    ...(value ? [{ name: "value", type: 3, value }] : []),
  ];
  const token = await rig.fake.slash({ user: rig.fake.carol, command: "neo-admin", sub: "channel", options });
  return ephemeral(rig, token);
}

async function ephemeral(rig: Rig, token: string): Promise<string> {
  const reply = await rig.fake.waitForCall(
    (c) => c.method === "PATCH" && c.path.endsWith(`/${token}/messages/@original`),
    "ephemeral reply",
  );
  return String(body(reply).content);
}

/** The answer, posted in a thread or written over its status line (the adapter may do either). */
const answered = (text: string) => (c: RecordedCall) =>
  (c.method === "POST" || c.method === "PATCH") &&
  /^\/channels\/\d+\/messages(\/\d+)?$/.test(c.path) &&
  body(c).content === text;

describe("Discord: per-channel settings, applied on the next turn", () => {
  let rig: Rig | undefined;
  let lines: string[] = [];
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
    setLogLevel("silent");
    setLogSink((l) => process.stdout.write(l));
  });
  const ignoredBecause = async (reason: string) => {
    const deadline = Date.now() + 10_000;
    while (!lines.some((l) => l.includes(`ignored message (${reason})`))) {
      if (Date.now() > deadline) throw new Error(`no "${reason}" line`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const captureLogs = () => {
    lines = [];
    setLogSink((l) => lines.push(l));
    setLogLevel("debug");
  };

  it("enabled off: a mention gets no answer, `/neo ask` says why; on again answers", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    expect(await admin(rig, "enabled", "off")).toMatch(/this channel is: DISABLED/);
    captureLogs();
    await fake.say(fake.alice, fake.channel, "hello?", { mentionBot: true });
    await ignoredBecause("Neo is turned off in this channel");
    const ask = await fake.slash({
      user: fake.alice,
      sub: "ask",
      options: [{ name: "text", type: 3, value: "hi" }],
    });
    expect(await ephemeral(rig, ask)).toBe(
      "Neo is turned off in this channel (an admin ran `/neo channel enabled off`).",
    );
    expect(ep.requests).toHaveLength(0);
    expect(fake.calls.some((c) => c.path.endsWith("/threads"))).toBe(false);

    await admin(rig, "enabled", "on");
    ep.script({ reply: { text: "Back on." } });
    await fake.say(fake.alice, fake.channel, "hello again", { mentionBot: true });
    await fake.waitForCall(answered("Back on."), "answer after enabling");
    expect(ep.requests).toHaveLength(1);
  });

  it("mention optional: a channel message without a mention opens a thread and is answered", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    captureLogs();
    await fake.say(fake.alice, fake.channel, "anyone know the wifi password?");
    await ignoredBecause("no mention of Neo in a channel");
    expect(ep.requests).toHaveLength(0);

    expect(await admin(rig, "mention", "optional")).toContain("mention optional");
    ep.script({ reply: { text: "It's on the wiki." } });
    const msg = await fake.say(fake.alice, fake.channel, "anyone know the printer's name?");
    await fake.waitForCall(
      (c) => c.method === "POST" && c.path === `/channels/${fake.channel.id}/messages/${msg.id}/threads`,
      "thread on the message",
    );
    await fake.waitForCall(answered("It's on the wiki."), "answer without a mention");
    expect(ep.requests[0]!.messages.at(-1)?.content).toBe("Alice: anyone know the printer's name?");
  });

  it("instructions, model and tools reach the next turn's request; status shows them", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script({ reply: { text: "Default." } });
    await fake.say(fake.alice, fake.channel, "first", { mentionBot: true });
    await fake.waitForCall(answered("Default."), "default answer");
    expect(ep.requests[0]!.model).toBe("main-model");
    expect(ep.requests[0]!.tools.map((t) => t.function.name)).toContain("gate__wait_for_gate");

    await admin(rig, "instructions", "Answer in French, briefly.");
    await admin(rig, "model", "fancy-model");
    expect(await admin(rig, "tools", "none")).toContain(
      "model `fancy-model`, tools none, instructions: “Answer in French, briefly.”",
    );
    ep.script({ reply: { text: "Fait." } });
    await fake.say(fake.alice, fake.channel, "second", { mentionBot: true });
    await fake.waitForCall(answered("Fait."), "answer with the channel's settings");
    const after = ep.requests[1]!;
    expect(after.model).toBe("fancy-model");
    expect(after.tools.map((t) => t.function.name)).not.toContain("gate__wait_for_gate");
    expect(after.system).toContain("Instructions for this channel, from its admins");
    expect(after.system).toContain("Answer in French, briefly.");

    expect(await admin(rig)).toMatch(/^This channel is: enabled, mention required, model `fancy-model`/);
    const status = await fake.slash({ user: fake.carol, command: "neo-admin", sub: "status" });
    expect(await ephemeral(rig, status)).toContain(`\`discord:${fake.guildId}:${fake.channel.id}\` enabled`);
  });
});
