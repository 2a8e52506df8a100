/**
 * Rate limits, end to end: the fake enforces Slack's tier shapes (windows shortened for the test)
 * and answers 429 beyond them; Neo must stay within them and lose nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { envelope, type Harness, mention, startHarness, until, userTs } from "./support/harness.js";

function lastUserText(req: ScriptedRequest): string {
  return String([...req.messages].reverse().find((m) => m.role === "user")?.content ?? "");
}

/** The model calls `lookup`, then answers the question it was asked by its number. */
function lookupThenAnswer(req: ScriptedRequest) {
  return req.messages.some((m) => m.role === "tool")
    ? { text: `answer to ${lastUserText(req).match(/question \d+/)?.[0]}` }
    : { toolCalls: [{ name: "lookup", arguments: {} }] };
}

describe("Slack rate limits", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("a burst of 30 mentions in one channel yields 30 answers and no request beyond the tier", async () => {
    h = await startHarness({ tools: { lookup: () => ({ content: "ok", isError: false }) } });
    h.ep.fallback(lookupThenAnswer);
    const sent = Array.from({ length: 30 }, (_, i) => ({ ts: userTs(), q: `question ${i + 1}` }));
    const acks = await Promise.all(
      sent.map((s) => h!.slack.event(envelope(mention("C7", "UANN", s.q, { ts: s.ts })))),
    );
    expect(acks.every((a) => a.status === 200)).toBe(true);
    const answers = () =>
      h!.fake.callsTo("chat.postMessage").filter((c) => String(c.args.text).startsWith("answer"));
    await h.fake.waitFor(() => answers().length === 30, "30 answers", 60_000);
    await until(
      "all turns idle and calls drained",
      () => h!.conversations.stats().running === 0 && h!.adapter.pendingCalls() === 0,
      30_000,
    );

    // Each answer in its own question's thread, exactly once.
    for (const s of sent) {
      const mine = answers().filter((c) => c.args.thread_ts === s.ts);
      expect(mine.map((c) => c.args.text)).toEqual([`answer to ${s.q}`]);
    }
    expect(h.fake.violations()).toEqual([]);
    const count = (m: string) => h!.fake.callsTo(m).length;
    console.info(
      `burst: ${count("chat.postMessage")} posts, ${count("chat.update")} edits, ${count("chat.delete")} deletes, ${h.fake.violations().length} over-tier`,
    );
    // No status message is left behind.
    expect(h.fake.messages("C7").filter((m) => m.text.startsWith("_•"))).toEqual([]);
  });

  it("waits out a 429 (Retry-After) and still delivers the answer once", async () => {
    h = await startHarness({ turns: [{ reply: { text: "after the wait" } }] });
    h.fake.inject429("chat.postMessage", 1, 1);
    await h.slack.event(envelope(mention("C8", "UANN", "hi")));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer after 429");
    const all = h.fake.calls.filter((c) => c.method === "chat.postMessage");
    expect(all.map((c) => c.status)).toEqual([429, 200]);
    expect(all[1]!.at - all[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(h.fake.callsTo("chat.postMessage")[0]!.args.text).toBe("after the wait");
  });

  it("a status line is shown only when its removal has room: with chat.delete's window full, none is posted and no turn waits", async () => {
    // One slot, and one chat.delete per ten minutes: only the first status can be removed at once.
    h = await startHarness({
      maxConcurrentTurns: 1,
      rates: { delete: { limit: 1, windowMs: 600_000 } },
      tools: { lookup: () => ({ content: "ok", isError: false }) },
    });
    h.ep.fallback(lookupThenAnswer);
    for (const i of [1, 2, 3]) await h.slack.event(envelope(mention(`CS${i}`, "UANN", `question ${i}`)));
    const answers = () =>
      h!.fake.callsTo("chat.postMessage").filter((c) => String(c.args.text).startsWith("answer"));
    await h.fake.waitFor(() => answers().length === 3, "3 answers, one slot");
    // In any order across channels: a turn whose answer waits for its channel's pacing hands the
    // one slot on (issue 30 item 2), so a later channel's answer may go first.
    expect(
      answers()
        .map((c) => String(c.args.text))
        .sort(),
    ).toEqual(["answer to question 1", "answer to question 2", "answer to question 3"]);
    await until("calls drained", () => h!.adapter.pendingCalls() === 0);
    const statuses = h.fake.callsTo("chat.postMessage").filter((c) => String(c.args.text).startsWith("_"));
    expect(statuses).toHaveLength(1);
    expect(h.fake.callsTo("chat.delete")).toHaveLength(1);
    for (const i of [1, 2, 3])
      expect(h.fake.messages(`CS${i}`).every((m) => m.text.startsWith("answer"))).toBe(true);
    expect(Object.keys(h.adapter.rateWaits()).filter((k) => k.includes("chat.delete"))).toEqual([]);
    expect(h.fake.violations()).toEqual([]);
  });
  it("on stop, waits for removals still queued behind chat.delete's tier", async () => {
    // Each question's first response streams text, then calls a tool: its draft is taken back
    // (removed without the turn waiting); with one chat.delete per 1.5 s the second removal queues.
    h = await startHarness({
      rates: { delete: { limit: 1, windowMs: 1500 } },
      draftPace: { firstWriteMs: 0, intervalMs: 0 },
      tools: { lookup: () => ({ content: "ok", isError: false }) },
    });
    const fake = h.fake;
    const streams = (n: number) => () =>
      fake.waitFor(() => fake.callsTo("chat.startStream").length >= n, `stream ${n}`);
    h.ep.script(
      {
        reply: {
          text: "Let me look that up.",
          toolCalls: [{ name: "lookup", arguments: {} }],
          stream: { deltas: 3, beforeDelta: async (i) => (i === 2 ? streams(1)() : undefined) },
        },
      },
      { reply: { text: "answer to question 1" } },
      {
        reply: {
          text: "Let me look that up.",
          toolCalls: [{ name: "lookup", arguments: {} }],
          stream: { deltas: 3, beforeDelta: async (i) => (i === 2 ? streams(2)() : undefined) },
        },
      },
      { reply: { text: "answer to question 2" } },
    );
    await h.slack.event(envelope(mention("CD1", "UANN", "question 1", { ts: userTs() })));
    await fake.waitFor(() => fake.messages("CD1").some((m) => m.text === "answer to question 1"), "answer 1");
    await h.slack.event(envelope(mention("CD2", "UANN", "question 2", { ts: userTs() })));
    await fake.waitFor(() => fake.messages("CD2").some((m) => m.text === "answer to question 2"), "answer 2");
    await h.close(); // the adapter stops first
    h = null;
    expect(fake.callsTo("chat.delete")).toHaveLength(2);
    expect(
      fake
        .messages("CD1")
        .concat(fake.messages("CD2"))
        .map((m) => m.text),
    ).toEqual(["answer to question 1", "answer to question 2"]);
  });
});
