/**
 * What a Slack thread costs in model tokens (issue 15): a thread of N human messages by three
 * people, Neo mentioned in every 5th, through the real Bolt app against the fake Slack, the real
 * conversations layer and loop through the real openai SDK against the scripted endpoint. Each
 * mention brings in only the messages since the last one (the journal is the cursor), so the
 * transcript, and the human words in the last request, grow by the same amount per message.
 *
 * Tokens are the loop's own estimate (`estimateTokens`) of what each turn request carried: its
 * system block and every message. "Total" sums every request (each resends the transcript, as any
 * chat does: that part grows with the number of turns); "last request" is the transcript Neo holds
 * after N messages.
 */
import { estimateTokens } from "../src/core/budget/estimate.js";
import { DEFAULT_USERS, envelope, type Harness, startHarness } from "../test/slack/support/harness.js";
import type { ScriptedRequest } from "../test/support/scripted-openai.js";
import type { BenchSection } from "./types.js";

const SIZES = [10, 100];
const MENTION_EVERY = 5;
const PEOPLE = ["UANN", "UBOB", "UCAROL"];
const ROOT = "1800000000.000001";
const tsOf = (n: number): string => `1800000000.${String(n).padStart(6, "0")}`;
const textOf = (n: number): string =>
  `message ${n}: the rollout of region ${n % 7} waits on the canary, error rate ${(n % 5) / 10} %, next step at ${n}:00`;

const requestTokens = (r: ScriptedRequest): number =>
  estimateTokens(r.system) +
  r.messages.reduce(
    (sum, m) =>
      sum + estimateTokens(typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "")),
    0,
  );
const humanTokens = (r: ScriptedRequest): number =>
  r.messages
    .filter((m) => m.role === "user")
    .reduce(
      (sum, m) => sum + estimateTokens(typeof m.content === "string" ? m.content : JSON.stringify(m.content)),
      0,
    );

interface Row {
  n: number;
  turns: number;
  total: number;
  last: number;
  lastHuman: number;
  /** Times the most repeated human message appears in the last request (1 = each once). */
  maxRepeat: number;
}

async function thread(n: number): Promise<Row> {
  const h: Harness = await startHarness({
    users: [...DEFAULT_USERS, { id: "UCAROL", name: "carol", display_name: "Carol" }],
  });
  h.ep.fallback(() => ({ text: "Noted: the canary decides, I will keep an eye on it." }));
  try {
    let answers = 0;
    for (let i = 1; i <= n; i++) {
      const user = PEOPLE[i % PEOPLE.length]!;
      const mention = i % MENTION_EVERY === 0 || i === n;
      const text = mention ? `<@UNEO> ${textOf(i)}` : textOf(i);
      h.fake.seedMessage({ channel: "C1", user, text, ts: tsOf(i), ...(i === 1 ? {} : { thread_ts: ROOT }) });
      if (!mention) continue;
      // An app_mention as Slack sends it (https://api.slack.com/events/app_mention), in the thread.
      const event = {
        type: "app_mention",
        channel: "C1",
        user,
        text,
        ts: tsOf(i),
        event_ts: tsOf(i),
        thread_ts: ROOT,
      };
      await h.slack.event(envelope(event));
      answers++;
      await h.fake.waitFor(
        () => h.fake.callsTo("chat.postMessage").length >= answers,
        `answer ${answers}`,
        60_000,
      );
    }
    const turns = h.ep.requests.filter((r) => r.purpose === "turn");
    const last = turns.at(-1)!;
    const sentLast = JSON.stringify(last.messages);
    let maxRepeat = 0;
    for (let i = 1; i <= n; i++) maxRepeat = Math.max(maxRepeat, sentLast.split(`message ${i}:`).length - 1);
    return {
      n,
      turns: turns.length,
      total: turns.reduce((sum, r) => sum + requestTokens(r), 0),
      last: requestTokens(last),
      lastHuman: humanTokens(last),
      maxRepeat,
    };
  } finally {
    await h.close();
  }
}

export async function run(): Promise<BenchSection> {
  const rows: Row[] = [];
  for (const n of SIZES) rows.push(await thread(n));
  const table = [
    "| thread messages | turns (mentions) | tokens sent, all requests | per message | last request | its human words | per message | most copies of one message in it |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows
      .map((r) =>
        [
          r.n,
          r.turns,
          r.total.toLocaleString("en-US"),
          (r.total / r.n).toFixed(0),
          r.last.toLocaleString("en-US"),
          r.lastHuman.toLocaleString("en-US"),
          (r.lastHuman / r.n).toFixed(1),
          r.maxRepeat,
        ].join(" | "),
      )
      .map((line) => `| ${line} |`),
  ];
  return {
    title: "Thread cost: tokens sent to the model for an N-message Slack thread",
    markdown: [
      `Three people, Neo mentioned in every ${MENTION_EVERY}th message (and the last); each mention brings in only the messages since the one before (real Bolt app, fake Slack, real loop, scripted model). Tokens are the loop's estimate of each turn request (system block and messages). The human words in the last request grow by a constant per message; the total grows with turns × transcript, as every chat request resends its transcript.`,
      "",
      ...table,
    ].join("\n"),
  };
}
