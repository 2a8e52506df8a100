/**
 * Neo in Slack's assistant panel (issue 18 item 3), through the real Bolt app (its `Assistant`
 * middleware) against the fake Slack, which validates assistant.threads.setStatus /
 * setSuggestedPrompts / setTitle as Slack documents them: a started thread is greeted with the
 * configured prompts; a question sets the thread's status (the tool being run while it runs), the
 * answer streams into the thread, the status is cleared and the thread titled; the channel the user
 * has open beside the panel reaches the model.
 *
 * Event payloads as Slack documents them: https://docs.slack.dev/reference/events/assistant_thread_started,
 * https://docs.slack.dev/reference/events/assistant_thread_context_changed, and a `message.im` event
 * in the assistant thread (channel_type "im", thread_ts of the thread).
 */
import { afterEach, describe, expect, it } from "vitest";
import { renderAnswer } from "../../src/adapters/slack/answer-render.js";
import { THINKING } from "../../src/adapters/slack/assistant.js";
import {
  envelope,
  type Harness,
  startHarness,
  TEAM,
  TEST_ASSISTANT,
  until,
  userTs,
} from "./support/harness.js";

const DM = "D0ANN";
const THREAD = "1729999327.187299";

const threadEvent = (
  type: "assistant_thread_started" | "assistant_thread_context_changed",
  viewing: string,
) => ({
  type,
  assistant_thread: {
    user_id: "UANN",
    context: { channel_id: viewing, team_id: TEAM, enterprise_id: "E480293PS82" },
    channel_id: DM,
    thread_ts: THREAD,
  },
  event_ts: "1715873754.429808",
});

const question = (text: string, ts = userTs()) => ({
  type: "message",
  channel: DM,
  channel_type: "im",
  user: "UANN",
  text,
  ts,
  thread_ts: THREAD,
  event_ts: ts,
});

const neoTexts = (h: Harness) =>
  h.fake
    .messages(DM, THREAD)
    .filter((m) => m.user === "UNEO")
    .map((m) => m.text);

describe("Slack: the assistant panel", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("a started thread is greeted and offered the configured prompts", async () => {
    h = await startHarness();
    const res = await h.slack.event(envelope(threadEvent("assistant_thread_started", "C1")));
    expect(res.status).toBe(200);
    await h.fake.waitFor(() => h!.fake.assistantThread(DM, THREAD)?.prompts !== undefined, "the prompts");
    expect(neoTexts(h)).toEqual([TEST_ASSISTANT.greeting]);
    expect(h.fake.assistantThread(DM, THREAD)?.prompts).toEqual(TEST_ASSISTANT.prompts);
    expect(h.fake.violations()).toEqual([]);
  });

  it("a question: status set (with the tool being run), the answer streamed, status cleared, thread titled; the model knows the channel in view", async () => {
    h = await startHarness({
      draftPace: { firstWriteMs: 0, intervalMs: 100 },
      tools: { lookup__channel: () => ({ content: "three deploys today", isError: false }) },
    });
    const { fake } = h;
    await h.slack.event(envelope(threadEvent("assistant_thread_started", "C1")));
    // The user switched to #random beside the panel.
    await h.slack.event(envelope(threadEvent("assistant_thread_context_changed", "CRANDOM")));
    const answer = "Three deploys went out in #random today, all of them green, none rolled back.";
    let statusWhileStreaming: string | undefined;
    h.ep.script(
      { reply: { toolCalls: [{ name: "lookup__channel", arguments: {} }] } },
      {
        reply: {
          text: answer,
          stream: {
            deltas: 8,
            beforeDelta: async (i) => {
              if (i !== 6) return;
              await fake.waitFor(() => fake.callsTo("chat.startStream").length === 1, "the stream");
              statusWhileStreaming = fake.assistantThread(DM, THREAD)?.status;
            },
          },
        },
      },
    );
    await h.slack.event(envelope(question("what happened in this channel today?")));
    await until(
      "the answer, status cleared",
      () =>
        neoTexts(h!).at(-1) === renderAnswer(answer)[0]!.text &&
        fake.assistantThread(DM, THREAD)?.status === "",
    );
    const statuses = fake.callsTo("assistant.threads.setStatus").map((c) => String(c.args.status));
    expect(statuses[0]).toBe(THINKING);
    expect(statuses.some((s) => s.includes("lookup__channel"))).toBe(true);
    expect(statuses.at(-1)).toBe("");
    expect(statusWhileStreaming).not.toBe("");
    // Streamed into the assistant thread, then ended as said whole; greeting then answer, no status message.
    expect(fake.callsTo("chat.startStream")[0]!.args).toMatchObject({ channel: DM, thread_ts: THREAD });
    expect(neoTexts(h)).toEqual([TEST_ASSISTANT.greeting, renderAnswer(answer)[0]!.text]);
    expect(fake.assistantThread(DM, THREAD)?.title).toBe("what happened in this channel today?");
    expect(h.tools.calls.map((c) => c.name)).toEqual(["lookup__channel"]);
    // The channel in view reached the model (by name), beside the question.
    expect(JSON.stringify(h.ep.requests[0]!.messages)).toContain("#random open beside this conversation");
    expect(fake.violations()).toEqual([]);
  });

  it("the thread is titled once: a second question keeps the first title", async () => {
    h = await startHarness({ turns: [{ reply: { text: "One." } }, { reply: { text: "Two." } }] });
    await h.slack.event(envelope(threadEvent("assistant_thread_started", "C1")));
    await h.slack.event(envelope(question("first question")));
    await until("the first answer", () => neoTexts(h!).includes("One."));
    await h.slack.event(envelope(question("second question")));
    await until("the second answer", () => neoTexts(h!).includes("Two."));
    expect(h.fake.callsTo("assistant.threads.setTitle")).toHaveLength(1);
    expect(h.fake.assistantThread(DM, THREAD)?.title).toBe("first question");
  });
});
