/**
 * The answer comes first (DESIGN.md; issue 30), on Slack end to end: progress ("Queued…", a tool's
 * "• name") shows only once a wait has lasted about a second, and a turn whose answer is written
 * gives its slot to the next turn while the answer waits for the channel's pacing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { STATUS_DELAY_MS } from "../../src/adapters/slack/status.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { envelope, type Harness, mention, startHarness, until, userTs } from "./support/harness.js";

const lastUserText = (req: ScriptedRequest): string =>
  String([...req.messages].reverse().find((m) => m.role === "user")?.content ?? "");
const question = (req: ScriptedRequest) => lastUserText(req).match(/q\d+/)?.[0] ?? "?";

describe("Slack: answers first", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  const posts = (channel: string, thread?: string) =>
    h!.fake
      .callsTo("chat.postMessage")
      .filter((c) => c.args.channel === channel && (thread === undefined || c.args.thread_ts === thread));

  it("a wait shorter than a second shows no status; a longer one shows one, in its own thread, removed after the answer", async () => {
    h = await startHarness({ maxConcurrentTurns: 1, statusDelayMs: STATUS_DELAY_MS });
    // q1 is held until q2, waiting behind it, has shown its status (a second in); q4..q6
    // then go one after another, each behind a turn that answers at once.
    const long = [userTs(), userTs(), userTs()];
    const queuedIn = (ts: string) => posts("C1", ts).some((p) => String(p.args.text).startsWith("_Queued"));
    h.ep.fallback((req) => ({
      text: `answer ${question(req)}`,
      ...(question(req) === "q1"
        ? {
            stream: {
              beforeDelta: () => h!.fake.waitFor(() => queuedIn(long[1]!), "q2 queued", 20_000),
            },
          }
        : {}),
    }));
    for (const [i, ts] of long.entries())
      await h.slack.event(envelope(mention("C1", "UANN", `q${i + 1}`, { ts })));
    await until(
      "three answers",
      () => posts("C1").filter((p) => String(p.args.text).startsWith("answer")).length === 3,
      20_000,
    );
    const short = [userTs(), userTs(), userTs()];
    for (const [i, ts] of short.entries())
      await h.slack.event(envelope(mention("CRANDOM", "UANN", `q${i + 4}`, { ts })));
    await until("three more answers", () => posts("CRANDOM").length >= 3);
    await until("calls drained", () => h!.adapter.pendingCalls() === 0);

    // Quick waits: the answers alone, nothing to remove.
    expect(posts("CRANDOM").map((p) => p.args.text)).toEqual(["answer q4", "answer q5", "answer q6"]);
    // Long waits: one "Queued" status in q2's thread (q1 ran at once), then the answer. q3's status
    // is optional in C1's pacing: it may find no room beside q2's (then none is shown), never two.
    for (const [i, ts] of long.entries()) {
      const texts = posts("C1", ts).map((p) => String(p.args.text));
      expect(texts.at(-1)).toBe(`answer q${i + 1}`);
      const statuses = texts.slice(0, -1);
      if (i === 0) expect(statuses).toEqual([]);
      if (i === 1) expect(statuses).toEqual([expect.stringMatching(/^_Queued: 1 conversation is ahead/)]);
      expect(statuses.length).toBeLessThanOrEqual(1);
      // Removed once the answer was there: the thread shows the answer only.
      expect(
        h.fake
          .messages("C1", ts)
          .filter((m) => m.user === "UNEO")
          .map((m) => m.text),
      ).toEqual([`answer q${i + 1}`]);
    }
    expect(h.fake.callsTo("chat.delete").length).toBe(
      posts("C1").filter((p) => String(p.args.text).startsWith("_Queued")).length,
    );
    expect(h.fake.violations()).toEqual([]);
  });

  it("a turn whose answer waits for the channel's pacing gives its slot to another user's turn", async () => {
    // One slot; in a channel, one post per 1.5 s.
    h = await startHarness({
      maxConcurrentTurns: 1,
      rates: { postPerChannel: { limit: 1, windowMs: 1500 } },
    });
    h.ep.fallback((req) => ({ text: `answer ${question(req)}` }));
    const answered = (channel: string, q: string) =>
      posts(channel).find((p) => p.args.text === `answer ${q}`);
    await h.slack.event(envelope(mention("C1", "UANN", "q1")));
    await until("Ann's first answer", () => answered("C1", "q1") !== undefined);
    // Ann's second answer is written at once, and waits for C1's pacing.
    await h.slack.event(envelope(mention("C1", "UANN", "q2")));
    await until("Ann's second answer waits for the channel", () =>
      Object.keys(h!.adapter.rateWaits()).some((k) => k.endsWith(":chat.postMessage:C1")),
    );
    await h.slack.event(envelope(mention("CRANDOM", "UBOB", "q3")));
    await until(
      "both answered",
      () => answered("C1", "q2") !== undefined && answered("CRANDOM", "q3") !== undefined,
    );
    // Bob's turn ran in the slot Ann's turn handed on: his answer is out before hers.
    expect(answered("CRANDOM", "q3")!.at).toBeLessThan(answered("C1", "q2")!.at);
    // Each answer once.
    expect(posts("C1").map((p) => p.args.text)).toEqual(["answer q1", "answer q2"]);
    expect(posts("CRANDOM").map((p) => p.args.text)).toEqual(["answer q3"]);
    expect(h.fake.violations()).toEqual([]);
  });
});
