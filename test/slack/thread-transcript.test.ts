/**
 * Each human message of a Slack thread enters Neo's transcript exactly once (issue 15 item 1): the
 * first mention in an existing thread reads the earlier messages once; later mentions bring in only
 * what the transcript does not hold yet, also after a restart. Real Bolt app, fake Slack, real loop.
 *
 * Payload shapes: `app_mention` as documented at https://api.slack.com/events/app_mention (type,
 * user, text with `<@U…>`, ts, channel, event_ts, thread_ts for a reply in a thread); thread
 * replies as `conversations.replies` returns them (https://api.slack.com/methods/conversations.replies:
 * user, text, ts, thread_ts), served by the fake from the seeded messages.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { estimateTokens } from "../../src/core/budget/estimate.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { DEFAULT_USERS, envelope, type Harness, startHarness } from "./support/harness.js";

const USERS = [...DEFAULT_USERS, { id: "UCAROL", name: "carol", display_name: "Carol" }];
const ROOT = "1800000000.000001";
const tsOf = (n: number): string => `1800000000.${String(n).padStart(6, "0")}`;

/** The 12 messages of the thread: three people, Neo mentioned in messages 4, 7, 10 and 12. */
const THREAD: Array<{ n: number; user: string; text: string; mention?: boolean }> = [
  { n: 1, user: "UANN", text: "m01 the nightly deploy failed again" },
  { n: 2, user: "UBOB", text: "m02 same error as last week?" },
  { n: 3, user: "UCAROL", text: "m03 no, this one is a timeout in the migration step" },
  { n: 4, user: "UANN", text: "m04 can you tell what the migration step does?", mention: true },
  { n: 5, user: "UBOB", text: "m05 it rewrites the ledger index" },
  { n: 6, user: "UCAROL", text: "m06 which takes 40 minutes on the big shard" },
  { n: 7, user: "UBOB", text: "m07 how long is the step timeout?", mention: true },
  { n: 8, user: "UANN", text: "m08 thirty minutes I think" },
  { n: 9, user: "UCAROL", text: "m09 so we raise it to an hour" },
  { n: 10, user: "UCAROL", text: "m10 would an hour be enough?", mention: true },
  { n: 11, user: "UBOB", text: "m11 let us try tonight" },
  { n: 12, user: "UANN", text: "m12 please summarise the plan", mention: true },
];

/** A name label ("Carol: ") and the framing of earlier messages, in tokens, at most. */
const LABEL_TOKENS = 4;
const FRAME_TOKENS = 25;

const markers = (upTo: number): string[] => THREAD.filter((m) => m.n <= upTo).map((m) => m.text.slice(0, 3));

/** How often `marker` appears in the transcript a request sent. */
const count = (req: ScriptedRequest, marker: string): number =>
  JSON.stringify(req.messages).split(marker).length - 1;

/** Tokens of what a request sent as human words (user messages), estimated as the loop does. */
const userTokens = (req: ScriptedRequest): number =>
  req.messages
    .filter((m) => m.role === "user")
    .reduce(
      (sum, m) => sum + estimateTokens(typeof m.content === "string" ? m.content : JSON.stringify(m.content)),
      0,
    );

function seed(h: Harness, upTo: number, from = 1): void {
  for (const m of THREAD.filter((x) => x.n >= from && x.n <= upTo)) {
    h.fake.seedMessage({
      channel: "C1",
      user: m.user,
      text: m.mention ? `<@UNEO> ${m.text}` : m.text,
      ts: tsOf(m.n),
      ...(m.n === 1 ? {} : { thread_ts: ROOT }),
    });
  }
}

async function mentionAndWait(h: Harness, n: number, answers: number): Promise<void> {
  const m = THREAD.find((x) => x.n === n)!;
  const event = {
    type: "app_mention",
    channel: "C1",
    user: m.user,
    text: `<@UNEO> ${m.text}`,
    ts: tsOf(n),
    event_ts: tsOf(n),
    thread_ts: ROOT,
  };
  expect((await h.slack.event(envelope(event))).status).toBe(200);
  await h.fake.waitFor(() => h.fake.callsTo("chat.postMessage").length >= answers, `answer ${answers}`);
}

const turnRequests = (h: Harness): ScriptedRequest[] => h.ep.requests.filter((r) => r.purpose === "turn");

describe("Slack threads: each human message enters the transcript once", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("a 12-message, 3-person thread with 4 mentions: every message once, the transcript grows by the new ones only", async () => {
    h = await startHarness({
      users: USERS,
      turns: [1, 2, 3, 4].map((i) => ({ reply: { text: `answer ${i}` } })),
    });
    const mentions = THREAD.filter((m) => m.mention).map((m) => m.n);
    for (const [i, n] of mentions.entries()) {
      seed(h, n, i === 0 ? 1 : mentions[i - 1]! + 1);
      await mentionAndWait(h, n, i + 1);
    }
    const reqs = turnRequests(h);
    expect(reqs).toHaveLength(4);
    // Request j holds exactly the messages up to the j-th mention, each once.
    for (const [j, n] of mentions.entries()) {
      for (const marker of markers(12)) {
        expect(count(reqs[j]!, marker), `${marker} in request ${j + 1}`).toBe(
          markers(n).includes(marker) ? 1 : 0,
        );
      }
    }
    // Tokens sent as human words grow by the new messages only: the last request holds each of the
    // 12 once (labels and context framing on top), where re-attaching the thread sends ~2.5x that.
    // Tokens sent as human words grow by the new messages only (linear in the thread): each request
    // adds the messages since the last mention, plus a name label each and the context framing.
    const words = (from: number, to: number): number =>
      THREAD.filter((m) => m.n > from && m.n <= to).reduce(
        (sum, m) => sum + estimateTokens(m.text) + LABEL_TOKENS,
        0,
      );
    expect(userTokens(reqs[0]!)).toBeLessThanOrEqual(words(0, mentions[0]!) + FRAME_TOKENS);
    for (let j = 1; j < 4; j++) {
      expect(
        userTokens(reqs[j]!) - userTokens(reqs[j - 1]!),
        `tokens added by mention ${j + 1}`,
      ).toBeLessThanOrEqual(words(mentions[j - 1]!, mentions[j]!) + FRAME_TOKENS);
    }
    // One conversations.replies per mention, each from where the transcript stops.
    expect(h.fake.callsTo("conversations.replies")).toHaveLength(4);
  });

  it("with every event Slack sends (message.channels): follow-ups are answered, each message still once", async () => {
    h = await startHarness({
      users: USERS,
      turns: Array.from({ length: 9 }, (_, i) => ({ reply: { text: `answer ${i + 1}` } })),
    });
    for (const m of THREAD) {
      seed(h, m.n, m.n);
      const text = m.mention ? `<@UNEO> ${m.text}` : m.text;
      const message = {
        type: "message",
        channel: "C1",
        channel_type: "channel",
        user: m.user,
        text,
        ts: tsOf(m.n),
        event_ts: tsOf(m.n),
        ...(m.n === 1 ? {} : { thread_ts: ROOT, parent_user_id: "UANN" }),
      };
      expect((await h.slack.event(envelope(message))).status).toBe(200);
      if (m.mention) {
        const { channel_type: _, ...rest } = message;
        expect((await h.slack.event(envelope({ ...rest, type: "app_mention" }))).status).toBe(200);
      }
      // Messages 1-3 precede Neo in the thread; from the first mention on, each one is answered.
      if (m.n >= 4)
        await h.fake.waitFor(
          () => h!.fake.callsTo("chat.postMessage").length === m.n - 3,
          `answer to ${m.n}`,
        );
    }
    const reqs = turnRequests(h);
    expect(reqs).toHaveLength(9);
    for (const marker of markers(12))
      expect(count(reqs[8]!, marker), `${marker} in the last request`).toBe(1);
    for (const [j, r] of reqs.entries()) {
      for (const marker of markers(12))
        expect(count(r, marker)).toBe(markers(j + 4).includes(marker) ? 1 : 0);
    }
    // The thread is read once, when Neo is first addressed; mentions after that find nothing new.
    const replies = h.fake.callsTo("conversations.replies");
    expect(replies[0]!.args.oldest).toBeUndefined();
    expect(replies.slice(1).every((c) => c.args.oldest !== undefined)).toBe(true);
  });

  it("a message delivered after a later mention already read it is not recorded again", async () => {
    h = await startHarness({
      users: USERS,
      turns: [1, 2, 3].map((i) => ({ reply: { text: `answer ${i}` } })),
    });
    seed(h, 4);
    await mentionAndWait(h, 4, 1);
    seed(h, 7, 5);
    await mentionAndWait(h, 7, 2);
    // Messages 5 and 6 arrive late, after the mention in 7 brought them in as its context.
    for (const n of [5, 6]) {
      const m = THREAD.find((x) => x.n === n)!;
      const late = {
        type: "message",
        channel: "C1",
        channel_type: "channel",
        user: m.user,
        text: m.text,
        ts: tsOf(n),
        event_ts: tsOf(n),
        thread_ts: ROOT,
        parent_user_id: "UANN",
      };
      expect((await h.slack.event(envelope(late))).status).toBe(200);
    }
    // The next follow-up is answered; the transcript holds each message once, 5 and 6 no second time.
    seed(h, 8, 8);
    const m8 = THREAD.find((x) => x.n === 8)!;
    const follow = {
      type: "message",
      channel: "C1",
      channel_type: "channel",
      user: m8.user,
      text: m8.text,
      ts: tsOf(8),
      event_ts: tsOf(8),
      thread_ts: ROOT,
      parent_user_id: "UANN",
    };
    expect((await h.slack.event(envelope(follow))).status).toBe(200);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length >= 3, "answer 3");
    const reqs = turnRequests(h);
    expect(reqs).toHaveLength(3);
    for (const marker of markers(8)) expect(count(reqs[2]!, marker), `${marker} in the last request`).toBe(1);
  });

  it("after a restart the next mention reads only what the transcript does not hold yet", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "neo-thread-restart-"));
    h = await startHarness({ users: USERS, dataDir, turns: [{ reply: { text: "answer before" } }] });
    seed(h, 4);
    await mentionAndWait(h, 4, 1);
    const before = turnRequests(h)[0]!;
    for (const marker of markers(4)) expect(count(before, marker)).toBe(1);
    await h.close();
    // The same workspace after the restart: the thread as Slack holds it, with two new messages.
    h = await startHarness({ users: USERS, dataDir, turns: [{ reply: { text: "answer after" } }] });
    seed(h, 7);
    await mentionAndWait(h, 7, 1);
    const after = turnRequests(h)[0]!;
    for (const marker of markers(7)) expect(count(after, marker), `${marker} after restart`).toBe(1);
    for (const marker of ["m08", "m09"]) expect(count(after, marker)).toBe(0);
  });
});
