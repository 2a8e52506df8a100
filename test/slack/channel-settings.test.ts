/**
 * `/neo channel …` on Slack: each setting changes what the next turn in that channel does. Signed
 * commands and events into the real Bolt app, the real conversations layer and loop, the real
 * openai SDK against the validating scripted endpoint, settings kept in the harness's file store.
 * A plain channel message is the `message.channels` event as Slack documents it
 * (https://api.slack.com/events/message.channels: type, channel, user, text, ts, channel_type).
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  envelope,
  type Harness,
  mention,
  slashCommand,
  startHarness,
  TEAM,
  until,
  userTs,
} from "./support/harness.js";

async function neo(h: Harness, user: string, text: string, channel = "C1"): Promise<string> {
  const res = await h.slack.command(slashCommand(h.fake.baseUrl, user, text, channel));
  return String((JSON.parse(res.body) as { text?: string }).text);
}

/** A channel message without a mention (`message.channels`). */
function channelMessage(channel: string, user: string, text: string, ts = userTs()) {
  return { type: "message", channel, user, text, ts, event_ts: ts, channel_type: "channel" };
}

const posted = (h: Harness, text: string) =>
  h.fake.callsTo("chat.postMessage").filter((c) => String(c.args.text) === text);
const idle = (h: Harness) => until("idle", () => h.conversations.stats().running === 0);

describe("Slack: per-channel settings, applied on the next turn", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("enabled off: no answer to a mention, `/neo ask` says why ephemerally; on again answers", async () => {
    h = await startHarness({ turns: [] });
    expect(await neo(h, "UANN", "channel enabled off")).toMatch(/admins only/);
    expect(await neo(h, "UADMIN", "channel enabled off")).toMatch(
      /^Changed; from the next turn on this channel is: DISABLED/,
    );
    await h.slack.event(envelope(mention("C1", "UANN", "hello?")));
    expect(await neo(h, "UANN", "ask what now?")).toBe(
      "Neo is turned off in this channel (an admin ran `/neo channel enabled off`).",
    );
    // Another channel is unaffected.
    h.ep.script({ reply: { text: "Hi from C2." } });
    await h.slack.event(envelope(mention("C2", "UANN", "hi")));
    await h.fake.waitFor(() => posted(h!, "Hi from C2.").length === 1, "answer in C2");
    expect(h.ep.requests).toHaveLength(1);

    expect(await neo(h, "UADMIN", "channel enabled on")).toContain("this channel is: enabled");
    h.ep.script({ reply: { text: "Back on." } });
    await h.slack.event(envelope(mention("C1", "UANN", "hello again")));
    await h.fake.waitFor(() => posted(h!, "Back on.").length === 1, "answer after enabling");
    expect(h.ep.requests.map((r) => r.messages.at(-1)?.content)).toEqual(["Ann: hi", "Ann: hello again"]);
  });

  it("mention optional: a channel message without a mention is answered, in a thread on it", async () => {
    h = await startHarness({ turns: [] });
    await h.slack.event(envelope(channelMessage("C1", "UANN", "anyone know the wifi password?")));
    await idle(h);
    expect(h.ep.requests).toHaveLength(0);

    await neo(h, "UADMIN", "channel mention optional");
    h.ep.script({ reply: { text: "It's on the wiki." } });
    const ts = userTs();
    await h.slack.event(envelope(channelMessage("C1", "UANN", "anyone know the printer's name?", ts)));
    await h.fake.waitFor(() => posted(h!, "It's on the wiki.").length === 1, "answer without mention");
    expect(posted(h, "It's on the wiki.")[0]!.args.thread_ts).toBe(ts);
    expect(h.ep.requests[0]!.messages.at(-1)?.content).toBe("Ann: anyone know the printer's name?");
  });

  it("instructions, model and tools reach the next turn's request; `/neo channel` and status show them", async () => {
    h = await startHarness({
      turns: [],
      tools: {
        alpha__look: () => ({ content: "alpha", isError: false }),
        beta__look: () => ({ content: "beta", isError: false }),
      },
    });
    h.ep.script({ reply: { text: "Default." } });
    await h.slack.event(envelope(mention("C1", "UANN", "first")));
    await h.fake.waitFor(() => posted(h!, "Default.").length === 1, "default answer");
    const before = h.ep.requests[0]!;
    expect(before.model).toBe("main-model");
    expect(before.tools.map((t) => t.function.name)).toEqual(["alpha__look", "beta__look"]);
    expect(before.system).not.toContain("Answer in French");
    await idle(h);

    await neo(h, "UADMIN", "channel instructions Answer in French, briefly.");
    await neo(h, "UADMIN", "channel model fancy-model");
    expect(await neo(h, "UADMIN", "channel tools alpha")).toBe(
      "Changed; from the next turn on this channel is: enabled, mention required, model `fancy-model`, tools `alpha`, instructions: “Answer in French, briefly.”.",
    );
    h.ep.script(
      {
        reply: { toolCalls: [{ name: "beta__look", arguments: {} }] },
      },
      { reply: { text: "Fait." } },
    );
    await h.slack.event(envelope(mention("C1", "UANN", "second")));
    await h.fake.waitFor(() => posted(h!, "Fait.").length === 1, "answer with the channel's settings");
    const after = h.ep.requests[1]!;
    expect(after.model).toBe("fancy-model");
    expect(after.tools.map((t) => t.function.name)).toEqual(["alpha__look"]);
    expect(after.system).toContain(
      "Instructions for this channel, from its admins (the rules above still come first):\nAnswer in French, briefly.",
    );
    // A call to a tool outside the channel's servers is refused in-band; nothing ran.
    expect(String(h.ep.requests[2]!.messages.at(-1)?.content)).toMatch(
      /^Tool beta__look is not available in this channel/,
    );

    const shown = await neo(h, "UADMIN", "channel");
    expect(shown).toMatch(/^This channel is: enabled, mention required, model `fancy-model`, tools `alpha`/);
    expect(await neo(h, "UADMIN", "status")).toContain(
      `\`slack:${TEAM}:C1\` enabled, mention required, model`,
    );
    // Back to the defaults.
    await neo(h, "UADMIN", "channel instructions clear");
    await neo(h, "UADMIN", "channel model default");
    expect(await neo(h, "UADMIN", "channel tools all")).toBe(
      "Changed; from the next turn on this channel is: enabled, mention required, model default, tools all, no instructions.",
    );
  });
});
