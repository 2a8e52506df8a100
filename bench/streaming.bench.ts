/**
 * Streamed answers (issue 18): how soon the user sees text compared with the model's first token,
 * and how many platform calls an answer costs. The real adapters at their default pacing (Discord:
 * 1.5 s per write per channel; Slack: first write 150 ms after the first text, then one call a
 * second, Slack's own tiers in the gate) against the fake platforms, the real loop through the real
 * openai SDK against the scripted SSE endpoint: a 3,000-character answer in 100 deltas over 5 s.
 * Discord: one DM per run. Slack: a mention answered in its thread (a streaming message), and the
 * same with streaming refused by the workspace (one message edited).
 *
 * Time to first visible text is measured from the moment the endpoint wrote the first text delta
 * to the moment the fake platform received the first call that showed answer text.
 */
import { splitMessage } from "../src/adapters/discord/split.js";
import { renderAnswer } from "../src/adapters/slack/answer-render.js";
import { DEFAULT_DRAFT_PACE } from "../src/adapters/slack/draft/pacer.js";
import { SLACK_RATE_RULES } from "../src/adapters/slack/outbound/rules.js";
import { startRig, until as untilDiscord, untilShown } from "../test/discord/support/harness.js";
import {
  DEFAULT_CHANNELS,
  envelope,
  mention,
  startHarness,
  until,
  userTs,
} from "../test/slack/support/harness.js";
import { type BenchSection, percentiles } from "./types.js";

const RUNS = 5;

function answerText(): string {
  const para = (i: number) =>
    `Paragraph ${i}: ${"the rollout goes region by region, each one watched for errors before the next. ".repeat(3).trim()}`;
  return Array.from({ length: 12 }, (_, i) => para(i + 1)).join("\n\n");
}

type Row = [string, string, string, string, string];

/** The Slack rows: one harness per mode, RUNS mentions each, answered in their threads. */
async function slackRow(label: string, refuse: boolean, answer: string): Promise<Row> {
  const h = await startHarness({
    draftPace: DEFAULT_DRAFT_PACE,
    rates: SLACK_RATE_RULES,
    channels: [
      ...DEFAULT_CHANNELS,
      ...Array.from({ length: RUNS }, (_, i) => ({ id: `CBENCH${i}`, name: `bench-${i}` })),
    ],
  });
  const firstText: number[] = [];
  const calls: number[] = [];
  const windows: number[] = [];
  const want = JSON.stringify(renderAnswer(answer).map((p) => p.text));
  try {
    if (refuse) h.fake.refuseStreams("not_allowed");
    for (let i = 0; i < RUNS; i++) {
      const channel = `CBENCH${i}`;
      let firstDeltaAt = 0;
      h.ep.script({
        reply: {
          text: answer,
          stream: {
            deltas: 100,
            intervalMs: 50,
            beforeDelta: async (n) => {
              if (n === 0) firstDeltaAt = Date.now();
            },
          },
        },
      });
      const ts = userTs();
      await h.slack.event(envelope(mention(channel, "UANN", `question ${i}`, { ts })));
      const shown = () =>
        JSON.stringify(
          h.fake
            .messages(channel, ts)
            .filter((m) => m.user === "UNEO" && !m.streaming)
            .map((m) => m.text),
        );
      await until("the answer as said whole", () => shown() === want, 30_000);
      await until("the turn ended", () => h.conversations.stats().running === 0, 30_000);
      const mine = h.fake.calls.filter(
        (c) => c.status === 200 && c.method.startsWith("chat.") && c.args.channel === channel,
      );
      const first = mine.find((c) => c.method === "chat.startStream" || c.method === "chat.postMessage");
      firstText.push(first!.at - firstDeltaAt);
      calls.push(mine.length);
      windows.push(h.fake.busiestEditWindow(channel, 60_000));
    }
  } finally {
    await h.close();
  }
  const ttf = percentiles(firstText);
  return [
    label,
    `${ttf.median} ms`,
    (ttf.median / STREAM_MS).toFixed(3),
    String(percentiles(calls).median),
    `${Math.max(...windows)} edits in 60 s (Tier 3: 50; appends Tier 4: 100)`,
  ];
}

const STREAM_MS = 100 * 50;

export async function run(): Promise<BenchSection> {
  const rig = await startRig({ draftIntervalMs: 1500 });
  const firstText: number[] = [];
  const calls: number[] = [];
  const windows: number[] = [];
  const answer = answerText();
  try {
    for (let i = 0; i < RUNS; i++) {
      const dm = rig.fake.dm(rig.fake.alice);
      let firstDeltaAt = 0;
      rig.ep.script({
        reply: {
          text: answer,
          stream: {
            deltas: 100,
            intervalMs: 50,
            beforeDelta: async (n) => {
              if (n === 0) firstDeltaAt = Date.now();
            },
          },
        },
      });
      await rig.fake.say(rig.fake.alice, dm, `question ${i}`);
      await untilShown(rig.fake, dm.id, splitMessage(answer));
      // The next run starts after this turn ended (its draft finished): runs never share a pacer slot.
      await untilDiscord("the turn ended", () => rig.conversations.stats().running === 0);
      const writes = rig.fake.calls.filter((c) => c.writesChannel === dm.id && c.status < 300);
      firstText.push(writes[0]!.at - firstDeltaAt);
      calls.push(rig.fake.calls.filter((c) => c.path.startsWith(`/channels/${dm.id}/messages`)).length);
      windows.push(rig.fake.busiestWindow(dm.id, 5000));
    }
  } finally {
    await rig.close();
  }
  const ttf = percentiles(firstText);
  const streamMs = STREAM_MS;
  const rows: Row[] = [
    [
      "Discord (fake)",
      `${ttf.median} ms`,
      (ttf.median / streamMs).toFixed(3),
      String(percentiles(calls).median),
      `${Math.max(...windows)} writes in 5 s (limit 5)`,
    ],
    await slackRow("Slack, thread: streaming message (fake)", false, answer),
    await slackRow("Slack, streaming refused: one message edited (fake)", true, answer),
  ];
  return {
    title: "Streamed answers: time to first visible text and platform calls per answer",
    markdown: [
      `A ${answer.length}-character answer in 100 deltas over ${streamMs / 1000} s, ${RUNS} runs, medians. "Ratio" is time to first visible text over the stream's length (what a non-streamed answer would make the user wait: 1.0 and more). Platform calls: Discord's message writes and deletes in the DM; Slack's chat.* calls in the channel (start/append/stop, posts, updates, deletes, the final replace included).`,
      "",
      "| platform | first visible text after the model's first token | ratio to the stream's length | platform calls per answer | busiest window |",
      "| --- | --- | --- | --- | --- |",
      ...rows.map((r) => `| ${r.join(" | ")} |`),
    ].join("\n"),
  };
}
