/**
 * Durable usage and the USD budget end to end on Slack: signed events and commands into the real
 * Bolt app, the real conversations layer and loop, the real openai SDK against the scripted
 * endpoint (which reports usage), and the usage tracker counting in the harness's file store.
 * Prices: `main-model=1,1` ($1 per million tokens each way), so 1,000 tokens are $0.001.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  envelope,
  type Harness,
  mention,
  slashCommand,
  startHarness,
  TEAM,
  until,
  userTs,
} from "../slack/support/harness.js";

async function neo(h: Harness, user: string, text: string): Promise<string> {
  const res = await h.slack.command(slashCommand(h.fake.baseUrl, user, text));
  return String((JSON.parse(res.body) as { text?: string }).text);
}

const posted = (h: Harness, text: (t: string) => boolean) =>
  h.fake.callsTo("chat.postMessage").filter((c) => text(String(c.args.text)));
const PRICES = { NEO_MODEL_PRICES: "main-model=1,1" };
const ANN = `slack:${TEAM}:UANN`;

describe("durable usage and the USD budget on Slack", () => {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });

  it("/neo usage still shows a user's usage after a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "neo-usage-"));
    const first = await startHarness({
      dataDir,
      env: PRICES,
      turns: [{ reply: { text: "Hello Ann.", usage: { prompt: 300, completion: 50 } } }],
    });
    open.push(first);
    await first.slack.event(envelope(mention("C1", "UANN", "hi")));
    await first.fake.waitFor(() => posted(first, (t) => t === "Hello Ann.").length === 1, "answer");
    await until("idle", () => first.conversations.stats().running === 0);
    const before = await neo(first, "UANN", "usage");
    await first.close();
    open.splice(0);

    const second = await startHarness({ dataDir, env: PRICES, turns: [] });
    open.push(second);
    const after = await neo(second, "UANN", "usage");
    expect(after).toBe(before);
    expect(after).toMatch(/^_Your usage_\n• Today \(UTC\): \$0\.00035 · 350 tokens · 1 model call\n/);
    expect(after).toContain("• This month (");

    // Another user's usage and the totals are for admins only.
    expect(await neo(second, "UBOB", `usage <@UANN>`)).toMatch(/^Only Neo admins/);
    expect(await neo(second, "UBOB", "usage all")).toMatch(/^Only Neo admins/);
    expect(await neo(second, "UADMIN", "usage <@UANN>")).toContain(
      `_Usage of \`${ANN}\`_\n• Today (UTC): $0.00035`,
    );
    const totals = await neo(second, "UADMIN", "usage all");
    expect(totals).toContain("• Deployment today (UTC): $0.00035 · 350 tokens · 1 model call");
    expect(totals).toContain(`    • \`${ANN}\` $0.00035 · 350 tokens · 1 model call`);
    expect(await neo(second, "UADMIN", "status")).toContain(
      "• Usage today (UTC, all instances): $0.00035 · 350 tokens · 1 model call",
    );
  });

  it("a USD budget gives a Notice in the thread at 80 % and an honest stop at 100 %", async () => {
    const h = await startHarness({
      env: PRICES,
      budgetUsd: 0.001,
      turns: [
        { label: "first", reply: { text: "Hello Ann.", usage: { prompt: 800, completion: 50 } } },
        { label: "second", reply: { text: "Still here.", usage: { prompt: 150, completion: 10 } } },
      ],
    });
    open.push(h);
    await h.slack.event(envelope(mention("C1", "UANN", "hi")));
    await h.fake.waitFor(() => posted(h, (t) => t === "Hello Ann.").length === 1, "first answer");
    await until("idle", () => h.conversations.stats().running === 0);

    // 85 %: the next turn says so once, as a visible context message in its thread, then answers.
    const second = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "again", { ts: second })));
    await h.fake.waitFor(() => posted(h, (t) => t === "Still here.").length === 1, "second answer");
    const notice = posted(h, (t) => t.startsWith("Heads-up:"));
    expect(notice).toHaveLength(1);
    expect(notice[0]!.args.thread_ts).toBe(second);
    expect(notice[0]!.args.text).toMatch(
      /^Heads-up: you have used \$0\.00085 of your daily budget of \$0\.0010 \(85 %\)\./,
    );
    expect(JSON.stringify(notice[0]!.args.blocks)).toContain('"type":"context"');
    await until("idle", () => h.conversations.stats().running === 0);

    // 101 %: the third turn ends with the reason, in its thread; no request is made.
    const third = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "and now?", { ts: third })));
    await h.fake.waitFor(() => posted(h, (t) => t.startsWith("I stopped because")).length === 1, "stop");
    const stop = posted(h, (t) => t.startsWith("I stopped because"))[0]!;
    expect(stop.args.thread_ts).toBe(third);
    expect(stop.args.text).toMatch(
      /^I stopped because your daily budget of \$0\.0010 is used up \(\$0\.0010 spent today\); it resets at 00:00 UTC/,
    );
    expect(h.ep.requests).toHaveLength(2);
    expect(posted(h, (t) => t.startsWith("Heads-up:"))).toHaveLength(1);

    // An admin raises Ann's budget: her next turn runs.
    expect(await neo(h, "UADMIN", "budget <@UANN> 1")).toBe(`Daily budget of \`${ANN}\` is now $1.00.`);
    expect(await neo(h, "UANN", "budget <@UANN> 5")).toMatch(/for Neo admins only/);
    h.ep.script({ reply: { text: "Back again.", usage: { prompt: 10, completion: 1 } } });
    await until("idle", () => h.conversations.stats().running === 0);
    await h.slack.event(envelope(mention("C1", "UANN", "please?")));
    await h.fake.waitFor(() => posted(h, (t) => t === "Back again.").length === 1, "answer after the raise");
  });
});
