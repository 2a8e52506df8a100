/**
 * Streamed answers on Discord (issue 18): how soon the user sees text compared with the model's
 * first token, and how many platform calls an answer costs. The real Discord adapter (real
 * discord.js, the adapter's default pacing of 1.5 s per write per channel) against the fake
 * Discord, the real loop through the real openai SDK against the scripted SSE endpoint: a
 * 3,000-character answer in 100 deltas over 5 s, one DM per run.
 *
 * Time to first visible text is measured from the moment the endpoint wrote the first text delta
 * to the moment the fake Discord answered the first message write in the DM.
 */
import { splitMessage } from "../src/adapters/discord/split.js";
import { startRig, untilShown } from "../test/discord/support/harness.js";
import { type BenchSection, percentiles } from "./types.js";

const RUNS = 5;

function answerText(): string {
  const para = (i: number) =>
    `Paragraph ${i}: ${"the rollout goes region by region, each one watched for errors before the next. ".repeat(3).trim()}`;
  return Array.from({ length: 12 }, (_, i) => para(i + 1)).join("\n\n");
}

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
      const writes = rig.fake.calls.filter((c) => c.writesChannel === dm.id && c.status < 300);
      firstText.push(writes[0]!.at - firstDeltaAt);
      calls.push(rig.fake.calls.filter((c) => c.path.startsWith(`/channels/${dm.id}/messages`)).length);
      windows.push(rig.fake.busiestWindow(dm.id, 5000));
    }
  } finally {
    await rig.close();
  }
  const ttf = percentiles(firstText);
  const streamMs = 100 * 50;
  const row = [
    "Discord (fake)",
    `${ttf.median} ms`,
    (ttf.median / streamMs).toFixed(3),
    String(percentiles(calls).median),
    String(Math.max(...windows)),
  ];
  return {
    title: "Streamed answers: time to first visible text and platform calls per answer",
    markdown: [
      `A ${answer.length}-character answer in 100 deltas over ${streamMs / 1000} s, ${RUNS} runs, medians. "Ratio" is time to first visible text over the stream's length (what a non-streamed answer would make the user wait: 1.0 and more). Slack: not measured yet (its draft is not built).`,
      "",
      "| platform | first visible text after the model's first token | ratio to the stream's length | platform calls per answer (message writes and deletes) | most writes in any 5 s (limit 5) |",
      "| --- | --- | --- | --- | --- |",
      `| ${row.join(" | ")} |`,
    ].join("\n"),
  };
}
