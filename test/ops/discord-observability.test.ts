/**
 * What an operator sees of a real Discord conversation: a DM turn with an MCP tool call, a gateway
 * redelivery of the same message, a guild message Neo ignores on purpose, and a 429 from Discord's
 * REST API (seen where discord.js reports every response). Counters move by exactly what happened;
 * the log has one line per inbound event, turn and tool call, each with the conversation key.
 */
import { afterEach, describe, expect, it } from "vitest";
import { dmConversation } from "../../src/adapters/discord/keys.js";
import { type Rig, startRig, until } from "../discord/support/harness.js";
import { wrote } from "../fakes/discord/fake-discord.js";
import { captureLogs, delta, type LogCapture, snapshot } from "./support/observe.js";

let rig: Rig | undefined;
let logs: LogCapture | undefined;
afterEach(async () => {
  logs?.stop();
  logs = undefined;
  await rig?.close();
  rig = undefined;
});

describe("ops: Discord metrics and logs", () => {
  it("counts and logs inbound (accepted, duplicate, ignored), the turn, its tool call and a 429", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const dm = fake.dm(fake.alice);
    const conv = dmConversation(dm.id);
    ep.script(
      { reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "ops" } }] } },
      { reply: { text: "pong" } },
    );
    rig.openGate("ops");
    fake.rateLimit("POST", new RegExp(`^/channels/${dm.id}/messages$`), 0.05, 1);
    const before = await snapshot();
    // Debug too: each message Neo ignores is logged there with its reason.
    logs = captureLogs("debug");

    const msg = await fake.say(fake.alice, dm, "ping");
    await fake.waitForCall(wrote("pong"), "the answer");
    await until("the turn's end is logged", () => logs!.info("turn ended").length === 1);
    // The gateway delivers the same message to a restarted process (discord.js itself drops a
    // repeat it still has cached): journaled once, counted as a duplicate.
    await rig.restartAdapter();
    await fake.gateway.dispatch("MESSAGE_CREATE", msg);
    await until("the redelivery is logged", () => logs!.info("inbound").length === 2);
    // A guild message that does not mention Neo: ignored on purpose.
    const chatting = await fake.say(fake.bob, fake.channel, "just chatting");
    const ignoredLines = () =>
      logs!.lines.filter((l) => String(l.msg).startsWith("discord: ignored message"));
    await until("the chat is ignored", () =>
      ignoredLines().some((l) => (l as { messageId?: string }).messageId === chatting.id),
    );
    // Neo's own messages come back through the gateway and are ignored too (a status line when the
    // turn ran long): the counter moves by exactly the messages ignored, each logged with its reason.
    expect(
      delta(before, await snapshot())("neo_inbound_messages_total", {
        platform: "discord",
        disposition: "ignored",
      }),
    ).toBe(ignoredLines().length);
    expect(
      ignoredLines()
        .map((l) => String(l.msg))
        .filter((m) => !m.endsWith("(message is Neo's own)")),
    ).toEqual(["discord: ignored message (no mention of Neo in a channel)"]);
    const d = delta(before, await snapshot());

    expect(d("neo_inbound_messages_total", { platform: "discord", disposition: "accepted" })).toBe(1);
    expect(d("neo_inbound_messages_total", { platform: "discord", disposition: "duplicate" })).toBe(1);
    expect(d("neo_turns_total", { status: "answered" })).toBe(1);
    expect(d("neo_steps_total")).toBe(2);
    expect(d("neo_tool_calls_total", { tool: "gate__wait_for_gate", outcome: "ok" })).toBe(1);
    expect(d("neo_platform_rate_limited_total", { platform: "discord" })).toBe(1);
    expect(d("neo_queue_wait_seconds_count")).toBe(1);
    expect(fake.calls.filter((c) => c.status === 429)).toHaveLength(1);

    const inbound = logs.info("inbound");
    expect(inbound.map((l) => l.disposition)).toEqual(["accepted", "duplicate"]);
    for (const l of inbound) expect(l).toMatchObject({ platform: "discord", id: msg.id, conversation: conv });
    const turns = logs.info("turn ended");
    expect(turns[0]).toMatchObject({ conversation: conv, status: "answered", steps: 2 });
    const calls = logs.info("tool call");
    expect(calls).toEqual([
      expect.objectContaining({
        conversation: conv,
        tool: "gate__wait_for_gate",
        outcome: "ok",
        argNames: ["name"],
      }),
    ]);
    expect(JSON.stringify(calls)).not.toContain('"ops"');
  });
});
