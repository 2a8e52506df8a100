/**
 * Approval limits, on Slack end to end (real Bolt app against the fake Slack, the loop, the embedded
 * executor over the fixture wallet that logs every execution):
 * - a model that calls core_execute 12 times in one step gets one approval prompt; the 11 other
 *   calls are refused in-band with a reason it can act on, and audited;
 * - a user with NEO_MAX_PENDING_APPROVALS (3 here, the default) open approvals is refused a fourth,
 *   in-band and audited; once one of them is decided, the next is offered again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { click, envelope, mention, TEAM, userTs } from "../slack/support/harness.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import {
  blockText,
  hasButtons,
  isPlan,
  isTurn,
  type SlackWallet,
  startSlackWallet,
} from "./support/slack-wallet.js";

const ANN = `slack:${TEAM}:UANN`;

let h: SlackWallet | undefined;
afterEach(async () => {
  const open = h;
  h = undefined;
  await open?.close();
});

const send = (amount: string) => ({
  toolCalls: [{ name: "wallet__transfer", arguments: { to: "0xabc", amount, asset: "USDC" } }],
});
const coreExecute = (intent: string) => ({ name: "core_execute", arguments: { intent } });
/** The tool results the model got back in this request, in call order. */
const toolResults = (r: ScriptedRequest) =>
  r.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
const approvalId = (m: Parameters<typeof blockText>[0]) => blockText(m).match(/"value":"([^"]+)"/)![1]!;

describe("Slack: approval limits", () => {
  it("12 core_execute calls in one step post one prompt; the other 11 are refused in-band", async () => {
    h = await startSlackWallet();
    const wallet = h;
    let results: string[] = [];
    wallet.ep.script(
      {
        match: isTurn,
        reply: { toolCalls: Array.from({ length: 12 }, (_, i) => coreExecute(`send ${i + 1} USDC`)) },
      },
      { match: isPlan, reply: send("1") },
      {
        match: isTurn,
        expect: (r) => {
          results = toolResults(r);
        },
        reply: { text: "One at a time." },
      },
    );
    const ts = userTs();
    await wallet.slack.event(envelope(mention("C5", "UANN", "send twelve", { ts })));
    await wallet.fake.waitFor(() => wallet.fake.messages("C5", ts).some(hasButtons), "the prompt", 30_000);
    const prompt = wallet.fake.messages("C5", ts).find(hasButtons)!;
    await click(wallet, prompt, "UANN", "neo_reject", approvalId(prompt));
    await wallet.fake.waitFor(
      () => wallet.fake.callsTo("chat.postMessage").some((c) => c.args.text === "One at a time."),
      "the answer",
      30_000,
    );

    // One prompt was ever posted in the thread, from one plan.
    const prompts = wallet.fake
      .callsTo("chat.postMessage")
      .filter((c) => JSON.stringify(c.args.blocks ?? []).includes('"action_id":"neo_approve"'));
    expect(prompts).toHaveLength(1);
    expect(wallet.ep.requests.filter(isPlan)).toHaveLength(1);
    expect(results).toHaveLength(12);
    const refused = results.filter((t) => t.includes("one step posts at most one approval prompt"));
    expect(refused).toHaveLength(11);
    for (const t of refused) {
      expect(t).toContain("Nothing was executed.");
      expect(t).toContain("put all the actions in one intent");
    }
    expect(results.filter((t) => t.includes("rejected by the user"))).toHaveLength(1);
    const audit = await wallet.broker.audit.recent(100);
    expect(audit.filter((e) => e.event === "refused_limit" && e.actor === ANN)).toHaveLength(11);
    expect(audit.filter((e) => e.event === "requested")).toHaveLength(1);
    expect(wallet.walletLog()).toEqual([]);
  }, 60_000);

  it("a fourth open approval is refused in-band and audited; deciding one frees its place", async () => {
    h = await startSlackWallet();
    const wallet = h;
    const fourth: string[] = [];
    wallet.ep.script(
      ...[1, 2, 3].flatMap((n) => [
        { match: isTurn, reply: { toolCalls: [coreExecute(`send ${n}`)] } },
        { match: isPlan, reply: send(String(n)) },
      ]),
      { match: isTurn, reply: { toolCalls: [coreExecute("send 4")] } },
      { match: isPlan, reply: send("4") },
      {
        match: isTurn,
        expect: (r) => {
          fourth.push(...toolResults(r));
        },
        reply: { text: "Too many open." },
      },
    );
    const threads: Array<{ channel: string; ts: string }> = [];
    for (const channel of ["C5", "C6", "C7"]) {
      const ts = userTs();
      threads.push({ channel, ts });
      await wallet.slack.event(envelope(mention(channel, "UANN", "send", { ts })));
      await wallet.fake.waitFor(
        () => wallet.fake.messages(channel, ts).some(hasButtons),
        `prompt in ${channel}`,
        30_000,
      );
    }
    const ts4 = userTs();
    await wallet.slack.event(envelope(mention("C8", "UANN", "send 4", { ts: ts4 })));
    await wallet.fake.waitFor(
      () => wallet.fake.callsTo("chat.postMessage").some((c) => c.args.text === "Too many open."),
      "the refusal answered",
      30_000,
    );
    expect(wallet.fake.messages("C8", ts4).some(hasButtons)).toBe(false);
    expect(fourth.at(-1)).toContain("Refused before approval: Ann already has 3 approval(s) waiting");
    expect(fourth.at(-1)).toContain("Nothing was executed.");
    const refusals = (await wallet.broker.audit.recent(100)).filter((e) => e.event === "refused_limit");
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({
      actor: ANN,
      requester: ANN,
      summary: "wallet__transfer 4 USDC to 0xabc",
    });

    // Rejecting one of the three frees a place: the next request is offered.
    wallet.ep.script(
      { match: isTurn, reply: { text: "Rejected." } },
      { match: isTurn, reply: { toolCalls: [coreExecute("send 5")] } },
      { match: isPlan, reply: send("5") },
    );
    const first = wallet.fake.messages(threads[0]!.channel, threads[0]!.ts).find(hasButtons)!;
    await click(wallet, first, "UANN", "neo_reject", approvalId(first));
    await wallet.fake.waitFor(
      () => wallet.fake.callsTo("chat.postMessage").some((c) => c.args.text === "Rejected."),
      "the rejection answered",
      30_000,
    );
    const ts5 = userTs();
    await wallet.slack.event(envelope(mention("C9", "UANN", "send 5", { ts: ts5 })));
    await wallet.fake.waitFor(() => wallet.fake.messages("C9", ts5).some(hasButtons), "the fifth", 30_000);
    expect(wallet.walletLog()).toEqual([]);
  }, 90_000);
});
