/**
 * `/neo` on Discord: every command is acknowledged at once with a deferred ephemeral reply; a
 * non-admin is refused an admin subcommand (under `/neo` or `/neo-admin`), a Manage Server member is
 * not; `/neo ask` shows its status in the ephemeral reply, edited in place, and answers in a follow-up.
 */
import { afterEach, describe, expect, it } from "vitest";
import { commandDefinitions } from "../../src/adapters/discord/index.js";
import type { UserKey } from "../../src/core/keys.js";
import { type RecordedCall, wrote } from "../fakes/discord/fake-discord.js";
import { type Rig, startRig } from "./support/harness.js";

const body = (c: RecordedCall) => c.body as Record<string, unknown>;

async function ephemeralAnswer(rig: Rig, token: string): Promise<{ ack: RecordedCall; reply: RecordedCall }> {
  const ack = await rig.fake.waitForCall((c) => c.path.endsWith(`/${token}/callback`), "ack");
  const reply = await rig.fake.waitForCall(
    (c) => c.method === "PATCH" && c.path.endsWith(`/${token}/messages/@original`),
    "reply",
  );
  return { ack, reply };
}

describe("Discord: /neo commands", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("refuses /neo status to a non-admin, ephemerally; a Manage Server member gets the status", async () => {
    rig = await startRig();
    const { fake } = rig;
    for (const command of ["neo", "neo-admin"]) {
      const token = await fake.slash({ user: fake.bob, command, sub: "status" });
      const { ack, reply } = await ephemeralAnswer(rig, token);
      expect(body(ack)).toEqual({ type: 5, data: { flags: 64 } });
      expect(String(body(reply).content)).toMatch(/admins only/);
    }
    const token = await fake.slash({ user: fake.carol, command: "neo-admin", sub: "status" });
    const { reply } = await ephemeralAnswer(rig, token);
    expect(String(body(reply).content)).not.toMatch(/admins only/);
    expect(String(body(reply).content)).toMatch(/gpt-test/);
  });

  it("a configured admin id (NEO_ADMIN_USER_IDS) without Manage Server may run admin subcommands", async () => {
    rig = await startRig({ adminIds: (f) => [`discord:${f.bob.id}`] });
    const token = await rig.fake.slash({ user: rig.fake.bob, sub: "status" });
    const { reply } = await ephemeralAnswer(rig, token);
    expect(String(body(reply).content)).not.toMatch(/admins only/);
    expect(String(body(reply).content)).toMatch(/gpt-test/);
  });

  it("/neo ask: ephemeral status edited in place, the answer as a follow-up", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script(
      { reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "ask" } }] } },
      { reply: { text: "The answer is 42." } },
    );
    const token = await fake.slash({
      user: fake.alice,
      sub: "ask",
      options: [{ name: "text", type: 3, value: "what is the answer?" }],
    });
    const { ack } = await ephemeralAnswer(rig, token);
    expect(body(ack)).toEqual({ type: 5, data: { flags: 64 } });
    const status = await fake.waitForCall(
      (c) =>
        c.method === "PATCH" &&
        c.path.endsWith(`/${token}/messages/@original`) &&
        String(body(c).content).includes("gate__wait_for_gate"),
      "status in the ephemeral reply",
    );
    rig.openGate("ask");
    // Streamed into a follow-up: posted at the first text, edited until it is the answer.
    await fake.waitForCall(wrote("The answer is 42."), "follow-up answer");
    const answer = fake.calls.find((c) => c.method === "POST" && c.path.endsWith(`/${token}`))!;
    expect(answer.seq).toBeGreaterThan(status.seq);
    // The answer is a visible follow-up, not ephemeral; no pings.
    expect(body(answer).flags ?? 0).toBe(0);
    expect(body(answer).allowed_mentions).toEqual({ parse: [], replied_user: false });
    // Nothing was posted with the bot token in the channel: the turn spoke through the interaction.
    expect(
      fake.calls.some((c) => c.method === "POST" && c.path === `/channels/${fake.channel.id}/messages`),
    ).toBe(false);
    expect(ep.requests[0]!.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "Alice: what is the answer?",
    ]);
  });

  it("a user an admin turned Neo off for runs no /neo subcommand, not only ask", async () => {
    rig = await startRig();
    const { fake } = rig;
    const carol = `discord:${fake.guildId}:${fake.carol.id}` as UserKey;
    await rig.access.deny(`discord:${fake.guildId}:${fake.bob.id}` as UserKey, carol);
    for (const sub of ["memory", "usage", "forget", "ask"]) {
      const { reply } = await ephemeralAnswer(rig, await fake.slash({ user: fake.bob, sub }));
      expect(String(body(reply).content), sub).toBe(
        "An admin has turned Neo off for you, so I can't run that.",
      );
    }
    // Alice is not denied: her /neo usage answers.
    const { reply } = await ephemeralAnswer(rig, await fake.slash({ user: fake.alice, sub: "usage" }));
    expect(String(body(reply).content)).toMatch(/^\*Your usage\*/);
  });

  it("/neo connections action:disconnect server:… reaches the command layer as `connections disconnect …`", async () => {
    rig = await startRig();
    const { fake } = rig;
    const token = await fake.slash({
      user: fake.alice,
      sub: "connections",
      options: [
        { name: "action", type: 3, value: "disconnect" },
        { name: "server", type: 3, value: "tracker" },
      ],
    });
    // This rig's manifest has no per-person OAuth server; with bad arguments the reply would be usage.
    expect(String(body((await ephemeralAnswer(rig, token)).reply).content)).toBe(
      "No tool server here signs people in one by one.",
    );
  });

  it("/neo forget asks to confirm with a button; pressing it wipes the caller's memory", async () => {
    rig = await startRig();
    const { fake } = rig;
    const token = await fake.slash({ user: fake.alice, sub: "forget" });
    const { reply } = await ephemeralAnswer(rig, token);
    const rows = body(reply).components as Array<{ components: Array<{ custom_id: string }> }>;
    const customId = rows[0]!.components[0]!.custom_id;
    expect(customId).toBe("neo:cmd:forget");
    const original = fake.channelMessages(fake.channel.id).find((m) => m.interaction_token === token)!;
    const click = await fake.click({ user: fake.alice, message: original, customId });
    const confirmed = await ephemeralAnswer(rig, click);
    expect(body(confirmed.ack)).toEqual({ type: 5, data: { flags: 64 } });
    expect(String(body(confirmed.reply).content)).toBe("There was nothing to forget.");
    expect(rig.forgotten).toEqual([`discord:${fake.guildId}:${fake.alice.id}`]);
  });

  it("/neo usage shows the caller's own usage; another user's and the totals only to an admin", async () => {
    rig = await startRig({ env: { NEO_MODEL_PRICES: "main-model=1,1" } });
    const { fake, ep } = rig;
    ep.script({ reply: { text: "Hi Alice.", usage: { prompt: 300, completion: 50 } } });
    await fake.say(fake.alice, fake.channel, "hello", { mentionBot: true });
    await fake.waitForCall(wrote("Hi Alice."), "answer");

    const own = await ephemeralAnswer(rig, await fake.slash({ user: fake.alice, sub: "usage" }));
    expect(String(body(own.reply).content)).toMatch(
      /^\*Your usage\*\n• Today \(UTC\): \$0\.00035 · 350 tokens · 1 model call\n/,
    );
    const bobAsks = await fake.slash({
      user: fake.bob,
      sub: "usage",
      options: [{ name: "user", type: 6, value: fake.alice.id }],
    });
    expect(String(body((await ephemeralAnswer(rig, bobAsks)).reply).content)).toMatch(/^Only Neo admins/);
    const carolAsks = await fake.slash({
      user: fake.carol,
      sub: "usage",
      options: [{ name: "scope", type: 3, value: "all" }],
    });
    expect(String(body((await ephemeralAnswer(rig, carolAsks)).reply).content)).toContain(
      "• Deployment today (UTC): $0.00035 · 350 tokens · 1 model call",
    );
  });

  it("registers /neo for everyone and /neo-admin hidden behind Manage Server", () => {
    const [neo, admin] = commandDefinitions();
    expect(neo!.name).toBe("neo");
    expect(neo!.default_member_permissions).toBeUndefined();
    expect(admin!.name).toBe("neo-admin");
    expect(admin!.default_member_permissions).toBe(String(1n << 5n));
    const subs = (c: Record<string, unknown>) => (c.options as Array<{ name: string }>).map((o) => o.name);
    expect(subs(neo!)).toEqual(["help", "ask", "memory", "forget", "reset", "usage", "connections"]);
    expect(subs(admin!)).toEqual([
      "status",
      "tools",
      "approvals",
      "allow",
      "deny",
      "limit",
      "budget",
      "compact",
      "reload",
      "channel",
    ]);
  });
});
