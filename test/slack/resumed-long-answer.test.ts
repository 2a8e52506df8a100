/**
 * A long answer (answer.md plus its beginning as the message) resumed after a crash, on Slack: the
 * first Neo posts it and dies before the turn's end marker reaches the log (real Redis, the real
 * conversations layer, Bolt against the fake Slack); the next Neo on the same store finds the turn
 * open with its answer and posts it again under the same key, marked resumed. Whatever of it the
 * first one got out, the thread ends with exactly one answer.md and one message beside it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ANSWER_EVENT } from "../../src/adapters/slack/reporter.js";
import { conversationKey } from "../../src/core/keys.js";
import type { FakeMessage } from "../fakes/slack/fake-slack.js";
import { crashAt, endMarker } from "../support/crash-store.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { envelope, type Harness, mention, startHarness, TEAM, until, userTs } from "./support/harness.js";

const redis = await probeRedis();

const para = (i: number) =>
  `Paragraph ${i}: ${"the rollout plan in detail, step by step. ".repeat(20).trim()}`;
/** 9,000+ characters: past the default NEO_ANSWER_FILE_CHARS (8,000), and three Slack messages as text. */
const LONG = Array.from({ length: 12 }, (_, i) => para(i + 1)).join("\n\n");
const LEAD = `${para(1).slice(0, para(1).slice(0, 400).lastIndexOf(" "))}…\n\n_(The full answer is attached as answer.md.)_`;

const isAnswerPart = (m: FakeMessage) => m.metadata?.event_type === ANSWER_EVENT;
/** What the thread shows of the answer: its files and its message parts, in order. */
const shown = (messages: FakeMessage[]) =>
  messages
    .filter((m) => m.files?.length || isAnswerPart(m))
    .map((m) => (m.files?.length ? `file: ${m.files.map((f) => f.name).join(", ")}` : m.text));

/** What the first Neo got out before it died. */
const CASES: Array<{ name: string; lost: (m: FakeMessage) => boolean }> = [
  { name: "after the file and the message", lost: () => false },
  { name: "between the file and the message", lost: isAnswerPart },
  { name: "before the file", lost: (m) => isAnswerPart(m) || Boolean(m.files?.length) },
];

describe.skipIf(!redis.ok)("Slack: a long answer resumed after a crash (real Redis)", () => {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0).reverse()) await h.close();
  });

  it.each(CASES)("died $name: one answer.md and one message", async ({ lost }) => {
    const prefix = uniquePrefix("slack-resumed-long");
    const crash = crashAt(endMarker);
    const first = await startHarness({
      turns: [{ reply: { text: LONG } }],
      redis: { url: redis.url, prefix },
      conversationStore: crash.wrap,
    });
    open.push(first);
    const { fake } = first;
    const ts = userTs();
    await first.slack.event(envelope(mention("C1", "UANN", "write the plan", { ts })));
    await crash.crashed;
    expect(shown(fake.messages("C1", ts))).toEqual(["file: answer.md", LEAD]);
    expect(fake.uploads.map((u) => u.bytes.toString("utf8"))).toEqual([LONG]);
    fake.removeMessages("C1", (m) => m.thread_ts === ts && lost(m));

    // The restart: the same instance id on the same store finds the turn open with its answer.
    const second = await startHarness({ redis: { url: redis.url, prefix }, reuseFake: fake });
    open.push(second);
    const log = `conv:log:{${conversationKey({ platform: "slack", workspace: TEAM, channel: "C1", thread: ts })}}`;
    let closed = false;
    await until("the resumed turn is closed", () => {
      void second.store.range<{ type: string }>(log, -1, -1).then(([e]) => {
        closed = e?.type === "turn-end";
      });
      return closed;
    });
    expect(shown(fake.messages("C1", ts))).toEqual(["file: answer.md", LEAD]);
    expect(second.ep.requests).toHaveLength(0);
  });
});
