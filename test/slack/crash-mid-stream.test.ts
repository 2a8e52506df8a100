/**
 * A crash while an answer is being written, on Slack: the first Neo shows part of the answer (a
 * streaming message in a thread; a posted message edited in place in a DM) and dies before the
 * model has finished (real Redis, the real conversations layer, Bolt against the fake Slack, the
 * real openai SDK against the scripted endpoint, held mid-answer). The next Neo on the same store
 * finds the turn open and runs it again. The thread must end with the final answer exactly once
 * and nothing left of the half-written one (no message still streaming, no partial text).
 */
import { afterEach, describe, expect, it } from "vitest";
import { renderAnswer } from "../../src/adapters/slack/answer-render.js";
import { conversationKey } from "../../src/core/keys.js";
import type { FakeMessage } from "../fakes/slack/fake-slack.js";
import { crashAt } from "../support/crash-store.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { envelope, type Harness, mention, startHarness, TEAM, until, userTs } from "./support/harness.js";

const redis = await probeRedis();

const FIRST = Array.from(
  { length: 6 },
  (_, i) => `Step ${i + 1}: ${"check the region before the next one goes. ".repeat(4).trim()}`,
).join("\n\n");
const FINAL = "The rollout goes region by region; each one is watched for errors before the next.";
/** Writes at once and often: the draft shows early. */
const PACE = { firstWriteMs: 0, intervalMs: 20 };

/** Neo's messages in the thread (or the DM), as a person sees them. */
const shown = (messages: FakeMessage[]) =>
  messages.filter((m) => m.user === "UNEO").map((m) => ({ text: m.text, streaming: m.streaming === true }));

const CASES = [
  {
    name: "a streaming message in a thread",
    channel: "C1",
    event: (ts: string) => mention("C1", "UANN", "how does the rollout go?", { ts }),
    thread: (ts: string) => ts,
    drafted: "chat.startStream",
  },
  {
    name: "a posted message edited in a DM",
    channel: "D1",
    event: (ts: string) => ({
      type: "message",
      channel: "D1",
      channel_type: "im",
      user: "UANN",
      text: "how does the rollout go?",
      ts,
      event_ts: ts,
    }),
    thread: () => undefined,
    drafted: "chat.postMessage",
  },
];

describe.skipIf(!redis.ok)("Slack: a crash while the answer is written (real Redis)", () => {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0).reverse()) await h.close();
  });

  it.each(CASES)("$name: the resumed turn leaves only its answer", async (c) => {
    const prefix = uniquePrefix("slack-crash-mid-stream");
    let dying = false;
    // The process dies at its first store call once the draft is up (a lease renewal, at the latest).
    const crash = crashAt(() => dying);
    const first = await startHarness({
      redis: { url: redis.url, prefix },
      conversationStore: crash.wrap,
      draftPace: PACE,
    });
    open.push(first);
    const { fake } = first;
    first.ep.script({
      reply: {
        text: FIRST,
        stream: {
          deltas: 12,
          beforeDelta: async (i) => {
            if (i < 6) return;
            // Half the answer is out and shown; the model never sends the rest to this process.
            await fake.waitFor(() => fake.callsTo(c.drafted).length > 0, "the draft");
            dying = true;
            await new Promise<never>(() => {});
          },
        },
      },
    });
    const ts = userTs();
    await first.slack.event(envelope(c.event(ts)));
    await crash.crashed;
    const before = shown(fake.messages(c.channel, c.thread(ts)));
    expect(before).toHaveLength(1);
    expect(FIRST.startsWith(before[0]!.text.slice(0, 20))).toBe(true);
    expect(before[0]!.streaming).toBe(c.drafted === "chat.startStream");

    // The restart: the same instance id on the same store finds the turn open, without its answer.
    const second = await startHarness({
      redis: { url: redis.url, prefix },
      reuseFake: fake,
      draftPace: PACE,
    });
    open.push(second);
    second.ep.script({ reply: { text: FINAL, stream: { deltas: 4 } } });
    const log = `conv:log:{${conversationKey({ platform: "slack", workspace: TEAM, channel: c.channel, thread: c.thread(ts) ?? c.channel })}}`;
    let closed = false;
    await until("the resumed turn is closed", () => {
      void second.store.range<{ type: string }>(log, -1, -1).then(([e]) => {
        closed = e?.type === "turn-end";
      });
      return closed;
    });
    const answer = renderAnswer(FINAL).map((p) => ({ text: p.text, streaming: false }));
    // Removals are not waited for by the turn: the thread settles to the answer alone.
    await until(
      "only the answer in the thread",
      () => JSON.stringify(shown(fake.messages(c.channel, c.thread(ts)))) === JSON.stringify(answer),
    ).catch(() => undefined);
    expect(shown(fake.messages(c.channel, c.thread(ts)))).toEqual(answer);
  });
});
