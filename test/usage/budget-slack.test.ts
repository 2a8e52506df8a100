/**
 * The per-user daily token budget and the usage lines of `/neo status`, end to end on Slack:
 * signed events into the real Bolt app, the real conversations layer and loop, the real openai SDK
 * against the scripted endpoint, and the usage tracker counting in the harness's store.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  envelope,
  type Harness,
  mention,
  startHarness,
  TEAM,
  until,
  userTs,
} from "../slack/support/harness.js";

function status(h: Harness, user: string) {
  return h.slack.command({
    command: "/neo",
    text: "status",
    team_id: TEAM,
    team_domain: "fake",
    channel_id: "C1",
    channel_name: "general",
    user_id: user,
    user_name: user.toLowerCase(),
    api_app_id: "A1",
    response_url: `${h.fake.baseUrl}/response/cmd-${user}`,
    trigger_id: "1.2.3",
    token: "legacy",
  });
}

const posted = (h: Harness, text: (t: string) => boolean) =>
  h.fake.callsTo("chat.postMessage").filter((c) => text(String(c.args.text)));

describe("per-user daily token budget on Slack", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("stops a user over budget with a clear message and no model request; others are unaffected", async () => {
    h = await startHarness({
      dailyTokens: 100,
      env: { NEO_MAIN_PRICE: "2,8" },
      turns: [
        { label: "ann", reply: { text: "Hello Ann.", usage: { prompt: 90, completion: 30 } } },
        { label: "bob", reply: { text: "Hello Bob.", usage: { prompt: 40, completion: 10 } } },
      ],
    });
    const annFirst = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "hi", { ts: annFirst })));
    await h.fake.waitFor(() => posted(h!, (t) => t === "Hello Ann.").length === 1, "Ann's answer");
    await until("idle", () => h!.conversations.stats().running === 0);
    expect(h.ep.requests).toHaveLength(1);

    // Ann spent 120 of 100: her next mention, in another thread, is refused before any request.
    const annSecond = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "and now?", { ts: annSecond })));
    await h.fake.waitFor(() => posted(h!, (t) => t.includes("daily limit")).length === 1, "refusal");
    const refusal = posted(h, (t) => t.includes("daily limit"))[0]!;
    expect(refusal.args.thread_ts).toBe(annSecond);
    expect(refusal.args.text).toMatch(
      /^You've reached your daily limit: 120 of 100 tokens used today\. It resets at 00:00 UTC \(in (\d+ h( \d+ min)?|\d+ min|under a minute)\); I can't answer you until then\.$/,
    );
    await until("idle", () => h!.conversations.stats().running === 0);
    expect(h.ep.requests).toHaveLength(1);

    // Bob is unaffected.
    const bobTs = userTs();
    await h.slack.event(envelope(mention("C1", "UBOB", "hi", { ts: bobTs })));
    await h.fake.waitFor(() => posted(h!, (t) => t === "Hello Bob.").length === 1, "Bob's answer");
    expect(h.ep.requests).toHaveLength(2);
    expect(posted(h, (t) => t.includes("daily limit"))).toHaveLength(1);

    // `/neo status` (admin): tokens and cost per user and per conversation, and today's counts.
    const res = await status(h, "UADMIN");
    const text = String((JSON.parse(res.body) as { text?: string }).text);
    const ann = `slack:${TEAM}:UANN`;
    const bob = `slack:${TEAM}:UBOB`;
    // Ann: 90×2 + 30×8 = $0.00042; Bob: 40×2 + 10×8 = $0.00016 (USD per 1M tokens).
    expect(text).toContain("Usage since start (this instance): 170 tokens ($0.00058) in 2 model calls");
    expect(text).toContain(`\`${ann}\` 120 tokens ($0.00042), 1 call`);
    expect(text).toContain(`\`${bob}\` 50 tokens ($0.00016), 1 call`);
    expect(text).toContain(`\`slack:${TEAM}:C1:${annFirst}\` 120 tokens ($0.00042)`);
    expect(text).toContain(`\`slack:${TEAM}:C1:${bobTs}\` 50 tokens ($0.00016)`);
    expect(text.indexOf(ann)).toBeLessThan(text.indexOf(bob)); // ranked by tokens
    expect(text).toMatch(/Daily budget: 100 tokens per user, resets 00:00 UTC/);
    expect(text).toContain(`\`${ann}\` 120 tokens (limit reached)`);
    expect(text).toMatch(new RegExp(`\`${bob}\` 50 tokens$`, "m"));
  });

  it("shows tokens without cost when no price is configured", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Hi.", usage: { prompt: 7, completion: 3 } } }] });
    await h.slack.event(envelope(mention("C1", "UANN", "hi")));
    await h.fake.waitFor(() => posted(h!, (t) => t === "Hi.").length === 1, "answer");
    const text = String((JSON.parse((await status(h, "UADMIN")).body) as { text?: string }).text);
    expect(text).toContain("10 tokens in 1 model call (no NEO_MAIN_PRICE set, so no cost)");
    expect(text).toContain(`\`slack:${TEAM}:UANN\` 10 tokens, 1 call`);
    expect(text).not.toContain("Daily budget");
  });
});
