/**
 * A busy workspace: dozens of people DM Neo at once, so the workspace's Tier 3 methods
 * (`chat.update`, `chat.delete`, ~50 a minute each) cannot carry every draft edit and status line.
 * Drafts, status lines and reactions are cosmetic; the answer is not: every answer must arrive
 * complete and exactly once without any call waiting for a Tier 3 window (the gate's own count of
 * calls that waited for room or a Retry-After). The tiers are Slack's own shapes (50 per 60 s), so a
 * call that waited would wait about a minute; the real Bolt app against the fake Slack, the real
 * loop through the real openai SDK against the SSE scripted endpoint.
 */
import { afterEach, describe, expect, it } from "vitest";
import { renderAnswer } from "../../src/adapters/slack/answer-render.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { envelope, type Harness, mention, startHarness, until, userTs } from "./support/harness.js";

const N = 80;
const TIER3 = { limit: 50, windowMs: 60_000 };
const TIER2 = { limit: 20, windowMs: 60_000 };
/** Slack's own tiers, windows and all (the tests' default shortens the windows). */
const SLACK_SHAPES = {
  postPerChannel: { limit: 3, windowMs: 3000 },
  update: TIER3,
  delete: TIER3,
  reactions: TIER3,
  assistant: TIER3,
  conversationsInfo: TIER3,
  replies: TIER3,
  history: TIER3,
  stream: TIER2,
  appendStream: { limit: 100, windowMs: 60_000 },
  usersInfo: { limit: 100, windowMs: 60_000 },
};
const dm = (i: number) => `DBUSY${String(i).padStart(3, "0")}`;
const user = (i: number) => `UBUSY${String(i).padStart(3, "0")}`;

/** About 700 characters: one Slack message, long enough to be shown as a draft and edited. */
const answerFor = (i: number) =>
  `Answer ${i}: ${"the deploy went region by region and each one was watched before the next. ".repeat(9).trim()}`;

function lastUserText(req: ScriptedRequest): string {
  return String([...req.messages].reverse().find((m) => m.role === "user")?.content ?? "");
}

describe("Slack: a busy workspace", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it(`${N} DM answers at once: each arrives complete and once, and no call waits for a Tier 3 window`, async () => {
    h = await startHarness({
      maxConcurrentTurns: N,
      // The production pace: a draft is posted 150 ms after the first text, then edited each second.
      draftPace: { firstWriteMs: 150, intervalMs: 1000 },
      users: Array.from({ length: N }, (_, i) => ({ id: user(i), name: `p${i}`, display_name: `P${i}` })),
      rates: SLACK_SHAPES,
      tools: { lookup: () => ({ content: "ok", isError: false }) },
    });
    const { fake } = h;
    // Even DMs call a tool first (a status line: posted, edited, removed); all stream their answer
    // over about 1.5 s, so each is shown as a draft and edited before it is complete.
    h.ep.fallback((req) => {
      const i = Number(lastUserText(req).match(/question (\d+)/)?.[1]);
      const toolFirst = i % 2 === 0 && !req.messages.some((m) => m.role === "tool");
      if (toolFirst) return { toolCalls: [{ name: "lookup", arguments: {} }] };
      return { text: answerFor(i), stream: { deltas: 15, intervalMs: 100 } };
    });
    const acks = await Promise.all(
      Array.from({ length: N }, (_, i) => {
        const ts = userTs();
        return h!.slack.event(
          envelope({
            type: "message",
            channel: dm(i),
            channel_type: "im",
            user: user(i),
            text: `question ${i}`,
            ts,
            event_ts: ts,
          }),
        );
      }),
    );
    expect(acks.every((a) => a.status === 200)).toBe(true);

    const shown = (i: number) =>
      fake
        .messages(dm(i))
        .filter((m) => m.user === "UNEO")
        .map((m) => ({ text: m.text, blocks: m.blocks ?? [] }));
    const final = (i: number) =>
      renderAnswer(answerFor(i)).map((p) => ({ text: p.text, blocks: p.blocks ?? [] }));
    const complete = () =>
      Array.from({ length: N }, (_, i) => i).filter(
        (i) => JSON.stringify(shown(i)) === JSON.stringify(final(i)),
      ).length;
    // Far less than Tier 3's window: an answer behind a full window would be a minute late.
    await until(`all ${N} answers complete (had ${complete()})`, () => complete() === N, 25_000).catch(
      (err: unknown) => {
        throw new Error(`${String(err)}; complete: ${complete()} of ${N}`);
      },
    );
    await until(
      "turns idle and calls drained",
      () => h!.conversations.stats().running === 0 && h!.adapter.pendingCalls() === 0,
      25_000,
    );

    // Exactly once, in its final form, nothing else left (status lines removed, no stale draft).
    for (let i = 0; i < N; i++) expect(shown(i)).toEqual(final(i));
    expect(fake.violations()).toEqual([]);
    // No call waited for room in a workspace-wide (Tier 2/3) window, nor for a Retry-After.
    const waits = h.adapter.rateWaits();
    const tierWaits = Object.entries(waits).filter(([key]) => !key.includes(":chat.postMessage:"));
    expect(tierWaits).toEqual([]);
    // The drafts were there: some answers were shown while written and brought up to date.
    const count = (m: string) => fake.callsTo(m).length;
    expect(count("chat.update")).toBeGreaterThan(0);
    expect(count("chat.update")).toBeLessThanOrEqual(TIER3.limit);
    expect(count("chat.delete")).toBeLessThanOrEqual(TIER3.limit);
    console.info(
      `busy: ${count("chat.postMessage")} posts, ${count("chat.update")} updates, ${count("chat.delete")} deletes; waits ${JSON.stringify(waits)}`,
    );
  }, 60_000);

  it("40 threaded answers at once: streams go only where their end has room, the rest are said whole, none waits", async () => {
    const n = 40;
    const channels = Array.from({ length: n }, (_, i) => ({ id: `CBUSY${i}`, name: `busy-${i}` }));
    h = await startHarness({
      maxConcurrentTurns: n,
      draftPace: { firstWriteMs: 150, intervalMs: 1000 },
      channels,
      rates: SLACK_SHAPES,
    });
    const { fake } = h;
    h.ep.fallback((req) => {
      const i = Number(lastUserText(req).match(/question (\d+)/)?.[1]);
      return { text: answerFor(i), stream: { deltas: 15, intervalMs: 100 } };
    });
    const threads = channels.map(() => userTs());
    await Promise.all(
      channels.map((c, i) =>
        h!.slack.event(envelope(mention(c.id, "UANN", `question ${i}`, { ts: threads[i] }))),
      ),
    );
    const shown = (i: number) =>
      fake
        .messages(channels[i]!.id, threads[i])
        .filter((m) => m.user === "UNEO")
        .map((m) => ({ text: m.text, blocks: m.blocks ?? [], streaming: Boolean(m.streaming) }));
    const final = (i: number) =>
      renderAnswer(answerFor(i)).map((p) => ({ text: p.text, blocks: p.blocks ?? [], streaming: false }));
    const complete = () =>
      channels.filter((_, i) => JSON.stringify(shown(i)) === JSON.stringify(final(i))).length;
    await until(`all ${n} answers complete`, () => complete() === n, 25_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; complete: ${complete()} of ${n}`);
    });
    await until("calls drained", () => h!.adapter.pendingCalls() === 0, 25_000);
    for (let i = 0; i < n; i++) expect(shown(i)).toEqual(final(i));
    expect(fake.violations()).toEqual([]);
    expect(Object.keys(h.adapter.rateWaits()).filter((k) => !k.includes(":chat.postMessage:"))).toEqual([]);
    // Some streamed (within chat.startStream's 20), the others were said whole.
    const started = fake.callsTo("chat.startStream").length;
    expect(started).toBeGreaterThan(0);
    expect(started).toBeLessThanOrEqual(TIER2.limit);
    expect(fake.callsTo("chat.stopStream").length).toBe(started);
  }, 60_000);
});
