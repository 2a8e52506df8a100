/**
 * Exactly once after a crash on Slack, which has no idempotency key for chat.postMessage: every
 * answer part carries its key as message metadata, and a turn resumed after the process died between
 * posting and closing looks in the conversation first and posts only the parts not there yet.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ANSWER_EVENT } from "../../src/adapters/slack/reporter.js";
import { conversationKey } from "../../src/core/keys.js";
import { envelope, type Harness, mention, startHarness, TEAM, userTs } from "./support/harness.js";

const paragraph = (n: number) =>
  `Part ${n}: ${"the settlement ran in order and every line matched. ".repeat(50)}`;
const LONG = [1, 2, 3].map(paragraph).join("\n\n"); // three Slack messages

describe("Slack: a resumed turn's answer", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("is posted with its key as metadata by a live turn", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Done." } }] });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "settle it", { ts })));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "the answer");
    expect(h.fake.messages("C1", ts).map((m) => m.metadata)).toEqual([
      { event_type: ANSWER_EVENT, event_payload: { key: `${TEAM}/C1/${ts}`, part: 0 } },
    ]);
  });

  it("in a thread: only the parts not posted yet are posted; all there, nothing is", async () => {
    h = await startHarness();
    const ts = userTs();
    const key = { id: `${TEAM}/C2/${ts}` };
    const reporter = h.adapter.io(
      conversationKey({ platform: "slack", workspace: TEAM, channel: "C2", thread: ts }),
    ).reporter;
    await reporter.say(LONG, key);
    const all = h.fake.messages("C2", ts).map((m) => m.text);
    expect(all).toHaveLength(3);
    // The process died after the first part: the others are gone from Slack's view.
    h.fake.removeMessages("C2", (m) => m.text !== all[0]);
    await reporter.say(LONG, { ...key, resumed: true });
    expect(h.fake.messages("C2", ts).map((m) => m.text)).toEqual(all);
    await reporter.say(LONG, { ...key, resumed: true });
    expect(h.fake.messages("C2", ts).map((m) => m.text)).toEqual(all);
    // Another turn's answer with the same words is its own.
    await reporter.say("Done.", { id: `${TEAM}/C2/${userTs()}` });
    await reporter.say("Done.", { id: `${TEAM}/C2/${userTs()}`, resumed: true });
    expect(h.fake.messages("C2", ts).filter((m) => m.text === "Done.")).toHaveLength(2);
  });

  it("in a DM (no thread): the channel after the opening message is looked at", async () => {
    h = await startHarness();
    const ts = userTs();
    const key = { id: `${TEAM}/D1/${ts}` };
    const reporter = h.adapter.io(
      conversationKey({ platform: "slack", workspace: TEAM, channel: "D1", thread: "D1" }),
    ).reporter;
    await reporter.say("Your balance is 5 USDC.", key);
    await reporter.say("Your balance is 5 USDC.", { ...key, resumed: true });
    expect(h.fake.messages("D1").map((m) => m.text)).toEqual(["Your balance is 5 USDC."]);
    expect(h.fake.callsTo("conversations.history")).toHaveLength(1);
  });
});
