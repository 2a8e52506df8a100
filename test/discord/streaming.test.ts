/**
 * Answers stream on Discord (issue 18): one reply edited as the model writes, split at 2,000
 * characters as it grows, paced per channel (the fake counts writes per 5 s window), the final
 * messages exactly the non-streamed rendering; a Stop button on the answer being written; a cut
 * stream ends in one honest message. Real discord.js against the fake Discord, the real loop through
 * the real openai SDK against the SSE scripted endpoint.
 */
import { afterEach, describe, expect, it } from "vitest";
import { splitMessage } from "../../src/adapters/discord/split.js";
import { INTERRUPTED_MARK, STOPPED_MARK } from "../../src/core/agent/answer-view.js";
import { type RecordedCall, wrote } from "../fakes/discord/fake-discord.js";
import { botMessages, type Rig, startRig, until, untilShown } from "./support/harness.js";

const body = (c: RecordedCall) => c.body as Record<string, unknown>;

/** About 3,000 characters in paragraphs: the answer outgrows one Discord message while it streams. */
function longAnswer(): string {
  const para = (i: number) =>
    `Paragraph ${i}: ${"the rollout goes region by region, each one watched for errors before the next. ".repeat(3).trim()}`;
  return Array.from({ length: 12 }, (_, i) => para(i + 1)).join("\n\n");
}

const hasStop = (m: Record<string, unknown>): boolean =>
  JSON.stringify(m.components ?? []).includes("neo:stop:");

describe("Discord: streamed answers", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("a 3,000-character answer in 100 deltas over 5 s: text shows before the stream ends, one write per paced turn (at most 4 per 5 s), final text as said whole", async () => {
    rig = await startRig({ draftIntervalMs: 1500 });
    const { fake, ep } = rig;
    const dm = fake.dm(fake.alice);
    const answer = longAnswer();
    expect(answer.length).toBeGreaterThan(3000);
    let seenBeforeEnd = false;
    ep.script({
      reply: {
        text: answer,
        stream: {
          deltas: 100,
          intervalMs: 50,
          // Halfway through the stream, the user must already see text.
          beforeDelta: async (i) => {
            if (i !== 50) return;
            await fake.waitForCall(
              wrote(() => true, dm.id),
              "first draft write",
              5000,
            );
            seenBeforeEnd = true;
          },
        },
      },
    });
    await fake.say(fake.alice, dm, "how does the rollout go?");
    await untilShown(fake, dm.id, splitMessage(answer));
    expect(seenBeforeEnd).toBe(true);
    const writes = fake.calls.filter((c) => c.writesChannel === dm.id);
    // The first write came while the model was still writing; it grew by edits, not new answers.
    expect(writes[0]!.method).toBe("POST");
    expect(writes.filter((c) => c.method === "POST")).toHaveLength(splitMessage(answer).length);
    expect(writes.filter((c) => c.method === "PATCH").length).toBeGreaterThan(0);
    // One write per paced turn (1.5 s apart): at most 4 in any 5 s, under Discord's 5.
    expect(fake.busiestWindow(dm.id, 5000)).toBeLessThanOrEqual(4);
    // No write pings anyone.
    for (const c of writes) expect(body(c).allowed_mentions).toEqual({ parse: [], replied_user: false });
    // The answer being written carried Stop; the finished one carries nothing.
    expect(writes.some((c) => hasStop(body(c)))).toBe(true);
    expect(botMessages(fake, dm.id).some(hasStop)).toBe(false);
  });

  it("text streamed with tool calls is taken back; the calls run and the answer follows", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    rig.openGate("g1");
    ep.script(
      {
        reply: {
          text: "Let me check the gate first.",
          toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "g1" } }],
          stream: { deltas: 4 },
        },
      },
      { reply: { text: "The gate was open.", stream: { deltas: 4 } } },
    );
    const dm = fake.dm(fake.bob);
    await fake.say(fake.bob, dm, "is the gate open?");
    await untilShown(fake, dm.id, ["The gate was open."]);
    // The tool result went back to the model paired with its call (the endpoint validates pairing).
    expect(ep.requests).toHaveLength(2);
    expect(ep.requests[1]!.messages.some((m) => m.role === "tool")).toBe(true);
    expect(ep.violations).toEqual([]);
  });

  it("a stream cut mid-answer and asked again: one answer, nothing shown twice", async () => {
    rig = await startRig({ env: { NEO_LLM_MAX_RETRIES: "1" } });
    const { fake, ep } = rig;
    const answer = "The migration ran for 41 minutes and moved 3,214 rows without a single error.";
    ep.script(
      { reply: { text: answer, stream: { deltas: 10, cutAfter: 4 } } },
      { reply: { text: answer, stream: { deltas: 5 } } },
    );
    const dm = fake.dm(fake.alice);
    await fake.say(fake.alice, dm, "how did the migration go?");
    await untilShown(fake, dm.id, [answer]);
    expect(ep.requests.map((r) => r.cut)).toEqual([true, false]);
  });

  it("a stream that stays broken: what was shown is finished as interrupted, then the trouble is said once", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script({
      reply: { text: "The first half of an answer that never ends", stream: { deltas: 4, cutAfter: 2 } },
    });
    const dm = fake.dm(fake.alice);
    await fake.say(fake.alice, dm, "tell me everything");
    await until(
      "two messages",
      () => botMessages(fake, dm.id).length === 2 && !botMessages(fake, dm.id).some(hasStop),
    );
    const [draft, trouble] = botMessages(fake, dm.id).map((m) => m.content);
    expect(draft).toBe(`The first half of an a\n\n${INTERRUPTED_MARK}`);
    expect(trouble).not.toContain("The first half");
  });

  it("Stop on the answer being written: refused to someone else, honoured for the requester", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    ep.script({
      reply: {
        text: "A long essay about rollouts that the user stops halfway through.",
        stream: { deltas: 6, beforeDelta: (i) => (i === 3 ? held : Promise.resolve()) },
      },
    });
    const mention = await fake.say(fake.alice, fake.channel, "write an essay", { mentionBot: true });
    const threadId = mention.id;
    await until("the answer shows with Stop", () => botMessages(fake, threadId).some(hasStop));
    const draft = botMessages(fake, threadId).find(hasStop)!;
    const customId = JSON.stringify(draft.components).match(/neo:stop:[^"]+/)![0];
    expect(customId.length).toBeLessThanOrEqual(100);

    const bobToken = await fake.click({ user: fake.bob, message: draft, customId });
    const refused = await fake.waitForCall(
      (c) => c.method === "PATCH" && c.path.endsWith(`/${bobToken}/messages/@original`),
      "refusal to Bob",
    );
    expect(String(body(refused).content)).toMatch(/Only the person who asked/);
    expect(rig.conversations.stats().running).toBe(1);

    const aliceToken = await fake.click({ user: fake.alice, message: draft, customId });
    const stopped = await fake.waitForCall(
      (c) => c.method === "PATCH" && c.path.endsWith(`/${aliceToken}/messages/@original`),
      "Alice's stop",
    );
    expect(body(stopped).content).toBe("Stopped.");
    release();
    await until("the draft is finished as stopped", () =>
      botMessages(fake, threadId).some((m) => m.content.endsWith(STOPPED_MARK) && !hasStop(m)),
    );
    const shown = botMessages(fake, threadId).map((m) => m.content);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.startsWith("A long essay")).toBe(true);
    expect(shown[0]).not.toContain("halfway through.");
    await until("the turn ended", () => rig!.conversations.stats().running === 0);
  });

  it("an admin may stop someone else's answer", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    ep.script({
      reply: {
        text: "Counting slowly: one two three four",
        stream: { deltas: 4, beforeDelta: (i) => (i === 2 ? held : Promise.resolve()) },
      },
    });
    const mention = await fake.say(fake.bob, fake.channel, "count", { mentionBot: true });
    await until("the answer shows with Stop", () => botMessages(fake, mention.id).some(hasStop));
    const draft = botMessages(fake, mention.id).find(hasStop)!;
    const customId = JSON.stringify(draft.components).match(/neo:stop:[^"]+/)![0];
    const token = await fake.click({ user: fake.carol, message: draft, customId });
    const reply = await fake.waitForCall(
      (c) => c.method === "PATCH" && c.path.endsWith(`/${token}/messages/@original`),
      "admin stop",
    );
    expect(body(reply).content).toBe("Stopped.");
    release();
    await until("stopped mark", () =>
      botMessages(fake, mention.id).some((m) => m.content.endsWith(STOPPED_MARK)),
    );
  });

  it("/neo ask streams into its follow-up before the model has finished", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const answer = "Forty-two, as computed by the deep thought cluster after a long while.";
    let token = "";
    let seenBeforeEnd = false;
    ep.script({
      reply: {
        text: answer,
        stream: {
          deltas: 8,
          beforeDelta: async (i) => {
            if (i !== 5) return;
            await fake.waitForCall(
              (c) => c.method === "POST" && token !== "" && c.path.endsWith(`/${token}`),
              "first follow-up",
              5000,
            );
            seenBeforeEnd = true;
          },
        },
      },
    });
    token = await fake.slash({
      user: fake.alice,
      sub: "ask",
      options: [{ name: "text", type: 3, value: "the answer?" }],
    });
    await fake.waitForCall(wrote(answer), "the streamed answer");
    expect(seenBeforeEnd).toBe(true);
    await fake.waitForCall(
      (c) =>
        c.method === "PATCH" &&
        c.path.endsWith(`/${token}/messages/@original`) &&
        body(c).content === "Answered below.",
      "status closed",
    );
    const followUps = fake.calls.filter((c) => c.method === "POST" && c.path.endsWith(`/${token}`));
    expect(followUps).toHaveLength(1);
    expect(body(followUps[0]!).flags ?? 0).toBe(0);
  });
});
