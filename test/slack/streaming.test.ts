/**
 * Answers stream on Slack (issue 18): a native streaming message (chat.startStream / appendStream /
 * stopStream, validated by the fake as Slack documents them) while the model writes, coalesced to
 * one call per interval; when the answer is complete the thread holds exactly what the non-streamed
 * path posts (renderAnswer). Where streaming is refused, one posted message edited instead. The
 * real Bolt app against the fake Slack, the real loop through the real openai SDK against the SSE
 * scripted endpoint.
 */
import { afterEach, describe, expect, it } from "vitest";
import { renderAnswer } from "../../src/adapters/slack/answer-render.js";
import { INTERRUPTED_MARK } from "../../src/core/agent/answer-view.js";
import type { FakeMessage } from "../fakes/slack/fake-slack.js";
import { envelope, type Harness, mention, startHarness, TEAM, until, userTs } from "./support/harness.js";

/** About 3,000 characters in paragraphs: more than one Slack message when rendered. */
function longAnswer(): string {
  const para = (i: number) =>
    `Paragraph ${i}: ${"the rollout goes region by region, each one watched for errors before the next. ".repeat(3).trim()}`;
  return Array.from({ length: 12 }, (_, i) => para(i + 1)).join("\n\n");
}

/** The production pace: first write 150 ms after the first text, then one call a second. */
const PACE = { firstWriteMs: 150, intervalMs: 1000 };

/** What Neo's messages in a thread look like to a person: text and blocks (none = []). */
const shown = (msgs: FakeMessage[]) =>
  msgs.filter((m) => m.user === "UNEO").map((m) => ({ text: m.text, blocks: m.blocks ?? [] }));
const rendered = (answer: string) =>
  renderAnswer(answer).map((p) => ({ text: p.text, blocks: p.blocks ?? [] }));

describe("Slack: streamed answers", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("a 3,000-character answer in 100 deltas over 5 s streams into the thread, within limits, and ends exactly as said whole", async () => {
    h = await startHarness({ draftPace: PACE });
    const { fake } = h;
    const answer = longAnswer();
    expect(renderAnswer(answer).length).toBe(2);
    let seenBeforeEnd = false;
    h.ep.script({
      reply: {
        text: answer,
        stream: {
          deltas: 100,
          intervalMs: 50,
          // Halfway through, the user must already see the answer streaming.
          beforeDelta: async (i) => {
            if (i !== 50) return;
            await fake.waitFor(() => fake.callsTo("chat.startStream").length === 1, "the stream", 5000);
            seenBeforeEnd = true;
          },
        },
      },
    });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "how does the rollout go?", { ts })));
    await until(
      "the answer as said whole",
      () => JSON.stringify(shown(fake.messages("C1", ts))) === JSON.stringify(rendered(answer)),
    );
    expect(seenBeforeEnd).toBe(true);
    const [start] = fake.callsTo("chat.startStream");
    expect(start!.args).toMatchObject({
      channel: "C1",
      thread_ts: ts,
      recipient_user_id: "UANN",
      recipient_team_id: TEAM,
    });
    expect(String(start!.args.markdown_text).startsWith("Paragraph 1:")).toBe(true);
    // It grew by appends, coalesced (100 deltas, a handful of calls), then was stopped and replaced.
    const appends = fake.callsTo("chat.appendStream").length;
    expect(appends).toBeGreaterThan(0);
    expect(appends).toBeLessThan(20);
    const order = fake.calls
      .filter((c) => c.status === 200 && c.method.startsWith("chat.") && c.args.channel === "C1")
      .map((c) => c.method);
    expect(order.indexOf("chat.stopStream")).toBeGreaterThan(order.lastIndexOf("chat.appendStream"));
    expect(order.indexOf("chat.update")).toBeGreaterThan(order.indexOf("chat.stopStream"));
    expect(fake.callsTo("chat.postMessage")).toHaveLength(1); // the second part
    expect(fake.messages("C1", ts).some((m) => m.streaming)).toBe(false);
    // Slack's limits: nothing refused; edits (appends and updates) far inside Tier 3/4 per minute.
    expect(fake.violations()).toEqual([]);
    expect(fake.busiestEditWindow("C1", 60_000)).toBeLessThanOrEqual(50);
    expect(fake.busiestEditWindow("C1", 1000)).toBeLessThanOrEqual(2);
  });

  it("text streamed with tool calls is taken back; the calls run and the answer follows", async () => {
    h = await startHarness({
      draftPace: { firstWriteMs: 0, intervalMs: 0 },
      tools: { gate__check: () => ({ content: "the gate is open", isError: false }) },
    });
    const { fake } = h;
    const ts = userTs();
    h.ep.script(
      {
        reply: {
          text: "Let me check the gate first.",
          toolCalls: [{ name: "gate__check", arguments: {} }],
          stream: {
            deltas: 4,
            // The text is on screen before the tool calls arrive.
            beforeDelta: async (i) => {
              if (i === 3)
                await fake.waitFor(() => fake.callsTo("chat.startStream").length === 1, "the first stream");
            },
          },
        },
      },
      { reply: { text: "The gate was open.", stream: { deltas: 4 } } },
    );
    await h.slack.event(envelope(mention("C1", "UANN", "is the gate open?", { ts })));
    await until(
      "the answer",
      () => JSON.stringify(shown(fake.messages("C1", ts))) === JSON.stringify(rendered("The gate was open.")),
    );
    expect(h.tools.calls.map((c) => c.name)).toEqual(["gate__check"]);
    // The tool result went back paired with its call (the endpoint validates pairing).
    expect(h.ep.requests[1]!.messages.some((m) => m.role === "tool")).toBe(true);
    expect(h.ep.violations).toEqual([]);
    // The taken-back stream was stopped, then deleted.
    const order = fake.calls.filter((c) => c.status === 200).map((c) => c.method);
    const stopped = order.indexOf("chat.stopStream");
    expect(stopped).toBeGreaterThan(order.indexOf("chat.startStream"));
    expect(order.indexOf("chat.delete", stopped)).toBeGreaterThan(stopped);
    expect(fake.violations()).toEqual([]);
  });

  it("a stream that stays broken: one honest message (what was shown, marked interrupted), then the trouble said once", async () => {
    h = await startHarness({ draftPace: { firstWriteMs: 0, intervalMs: 0 } });
    const { fake } = h;
    const ts = userTs();
    h.ep.script({
      reply: {
        text: "The first half of an answer that never ends",
        stream: {
          deltas: 4,
          cutAfter: 2,
          beforeDelta: async (i) => {
            if (i === 2)
              await fake.waitFor(() => fake.callsTo("chat.startStream").length === 1, "the stream");
          },
        },
      },
    });
    await h.slack.event(envelope(mention("C1", "UANN", "tell me everything", { ts })));
    await until("two messages, none streaming", () => {
      const m = fake.messages("C1", ts).filter((x) => x.user === "UNEO");
      return m.length === 2 && !m.some((x) => x.streaming);
    });
    const [draft, trouble] = fake.messages("C1", ts).filter((x) => x.user === "UNEO");
    expect(draft!.text).toBe(renderAnswer(`The first half of an a\n\n${INTERRUPTED_MARK}`)[0]!.text);
    expect(trouble!.text).not.toContain("The first half");
  });

  it("where Slack refuses to stream, one posted message is edited as the answer grows, and ends exactly as said whole", async () => {
    h = await startHarness({ draftPace: { firstWriteMs: 0, intervalMs: 200 } });
    const { fake } = h;
    fake.refuseStreams("not_allowed");
    const answer =
      "Step one: drain the queue.\n\nStep two: **swap** the <primary> & replica.\n\nStep three: watch.";
    let seenBeforeEnd = false;
    h.ep.script({
      reply: {
        text: answer,
        stream: {
          deltas: 10,
          intervalMs: 20,
          beforeDelta: async (i) => {
            if (i !== 6) return;
            await fake.waitFor(() => fake.callsTo("chat.postMessage").length === 1, "the first post", 5000);
            seenBeforeEnd = true;
          },
        },
      },
    });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "how do we fail over?", { ts })));
    await until(
      "the answer as said whole",
      () => JSON.stringify(shown(fake.messages("C1", ts))) === JSON.stringify(rendered(answer)),
    );
    expect(seenBeforeEnd).toBe(true);
    expect(fake.calls.filter((c) => c.method === "chat.startStream").length).toBeGreaterThanOrEqual(1);
    expect(fake.callsTo("chat.postMessage")).toHaveLength(1);
    expect(fake.callsTo("chat.update").length).toBeGreaterThan(0);
    expect(fake.violations()).toEqual([]);
  });

  it("an unthreaded DM cannot stream (streams are replies): its answer is one message edited as it grows", async () => {
    h = await startHarness({ draftPace: { firstWriteMs: 0, intervalMs: 100 } });
    const { fake } = h;
    const answer = "Your deploy finished at noon and every check passed on the first try.";
    h.ep.script({
      reply: {
        text: answer,
        stream: {
          deltas: 6,
          beforeDelta: async (i) => {
            if (i === 4)
              await fake.waitFor(() => fake.callsTo("chat.postMessage").length === 1, "the first post");
          },
        },
      },
    });
    const ts = userTs();
    await h.slack.event(
      envelope({
        type: "message",
        channel: "D1",
        channel_type: "im",
        user: "UANN",
        text: "deploy?",
        ts,
        event_ts: ts,
      }),
    );
    await until(
      "the answer",
      () => JSON.stringify(shown(fake.messages("D1"))) === JSON.stringify(rendered(answer)),
    );
    expect(fake.calls.filter((c) => c.method === "chat.startStream")).toHaveLength(0);
    expect(fake.callsTo("chat.update").length).toBeGreaterThan(0);
  });
});
