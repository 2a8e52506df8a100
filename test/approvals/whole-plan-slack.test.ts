/**
 * What you see is what runs, on Slack, end to end: the model asks core_execute for 41 transfers
 * (40 × 1 USDC, then 900 USDC to another address, the plan the attack run hid behind a cut
 * message). The approval message shows every action with all its arguments, the totals per
 * recipient and the plan hash; Approve runs exactly those 41 transfers, and the audit log carries
 * the hash shown. A plan a Slack message cannot hold whole is refused, to the model and the user.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fitsSlack } from "../../src/adapters/slack/approvals.js";
import { hashPlan } from "../../src/core/approvals/plan-hash.js";
import type { ApprovalRecord, Plan } from "../../src/core/approvals/types.js";
import { click, envelope, mention, userTs } from "../slack/support/harness.js";
import {
  blockText,
  hasButtons,
  isPlan,
  isTurn,
  type SlackWallet,
  startSlackWallet,
} from "./support/slack-wallet.js";

const SMALL = "0x1111111111111111111111111111111111111111";
const BIG = "0x9999999999999999999999999999999999999999";

const transfer = (to: string, amount: string) => ({
  name: "wallet__transfer",
  arguments: { to, amount, asset: "USDC" },
});

let h: SlackWallet | undefined;
afterEach(async () => {
  const open = h;
  h = undefined;
  await open?.close();
});

describe("Slack: the whole plan is on screen", () => {
  it("41 transfers: every one shown with its arguments and totals; Approve runs exactly those", async () => {
    h = await startSlackWallet();
    const wallet = h;
    wallet.ep.script(
      { match: isTurn, reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "pay them" } }] } },
      {
        match: isPlan,
        reply: {
          toolCalls: [...Array.from({ length: 40 }, () => transfer(SMALL, "1")), transfer(BIG, "900")],
        },
      },
      { match: isTurn, reply: { text: "Paid." } },
    );
    const ts = userTs();
    await wallet.slack.event(envelope(mention("C5", "UANN", "pay them", { ts })));
    await wallet.fake.waitFor(() => wallet.fake.messages("C5", ts).some(hasButtons), "approval", 30_000);
    const msg = wallet.fake.messages("C5", ts).find(hasButtons)!;
    const shown = blockText(msg);
    // Every action, numbered, with every argument; the 900 USDC one too.
    for (let i = 1; i <= 40; i++)
      expect(shown).toContain(`*${i}.* \`wallet__transfer\` (1 USDC → \`${SMALL}\`)`);
    expect(shown).toContain(`*41.* \`wallet__transfer\` (900 USDC → \`${BIG}\`)`);
    expect(shown).toContain(JSON.stringify(`{"amount":"900","asset":"USDC","to":"${BIG}"}`).slice(1, -1));
    expect(shown).toContain(`• \`${SMALL}\`: 40 USDC`);
    expect(shown).toContain(`• \`${BIG}\`: 900 USDC`);
    // Within Slack's limits, without a cut.
    const blocks = msg.blocks as Array<{ type: string; text?: { text: string } }>;
    expect(blocks.length).toBeLessThanOrEqual(50);
    for (const b of blocks) expect((b.text?.text ?? "").length).toBeLessThanOrEqual(3000);
    expect(shown).not.toContain("…");

    const approvalId = shown.match(/"value":"([^"]+)"/)![1]!;
    const rec = (await wallet.broker.get(approvalId))!;
    expect(shown).toContain(rec.planHash);
    expect(rec.planHash).toBe(hashPlan(rec.plan));

    await click(wallet, msg, "UANN", "neo_approve", approvalId);
    await wallet.fake.waitFor(
      () => wallet.fake.callsTo("chat.postMessage").some((c) => c.args.text === "Paid."),
      "the answer",
      60_000,
    );
    const ran = wallet.walletLog();
    expect(ran).toHaveLength(41);
    expect(ran.slice(0, 40).every((t) => t.to === SMALL && t.amount === "1")).toBe(true);
    expect(ran[40]).toMatchObject({ to: BIG, amount: "900", asset: "USDC" });
    // The audit log names the hash that was on the message for the offer, the click and the run.
    const audit = (await wallet.broker.audit.recent(20)).filter((e) => e.approvalId === approvalId);
    expect(audit.map((e) => e.event)).toEqual(["requested", "approved", "executing", "executed"]);
    for (const e of audit) expect(e.planHash).toBe(rec.planHash);
  }, 90_000);

  it("a plan Slack cannot show whole is refused: the model is told to split it, the user why, nothing runs", async () => {
    h = await startSlackWallet();
    const wallet = h;
    // One transfer whose recipient alone is longer than a Slack section.
    const long = `0x${"ab".repeat(1600)}`;
    wallet.ep.script(
      { match: isTurn, reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "pay" } }] } },
      { match: isPlan, reply: { toolCalls: [transfer(SMALL, "1"), transfer(long, "5")] } },
      {
        match: isTurn,
        expect: (r) => {
          const result = String(r.messages.at(-1)?.content);
          expect(result).toContain("Refused before approval");
          expect(result).toMatch(
            /cannot be shown in full on Slack: .* needs \d+ characters, more than a Slack section holds/,
          );
          expect(result).toContain("Split the intent");
        },
        reply: { text: "That plan is too big to show; I will split it." },
      },
    );
    const ts = userTs();
    await wallet.slack.event(envelope(mention("C5", "UANN", "pay", { ts })));
    await wallet.fake.waitFor(
      () => wallet.fake.callsTo("chat.postMessage").some((c) => String(c.args.text).includes("split it")),
      "the answer",
      30_000,
    );
    expect(wallet.fake.messages("C5", ts).some(hasButtons)).toBe(false);
    const said = wallet.fake
      .messages("C5", ts)
      .map((m) => m.text)
      .join("\n");
    expect(said).toContain("I did not ask for approval of a plan of 2 action(s)");
    expect(said).toContain("cannot be shown in full on Slack");
    expect(wallet.walletLog()).toEqual([]);
    const audit = await wallet.broker.audit.recent(5);
    expect(audit.at(-1)).toMatchObject({ event: "refused_plan", approvalId: null });
  }, 90_000);

  it("fitsSlack counts blocks and section lengths, and a plan over the size limit is refused before any", () => {
    const plan = (n: number, to = SMALL): Plan => ({
      id: "plan_x",
      intent: "pay",
      summary: "pay",
      actions: Array.from({ length: n }, () => ({
        tool: "wallet__transfer",
        arguments: { to, amount: "1", asset: "USDC" },
        spend: { amount: "1", asset: "USDC", recipient: to },
      })),
      requester: "slack:T1:UANN",
      createdAt: 0,
    });
    const rec = (p: Plan): ApprovalRecord => ({
      id: "apv_x",
      plan: p,
      planHash: hashPlan(p),
      requester: { userKey: "slack:T1:UANN", displayName: "Ann" },
      conversation: "slack:T1:C1:1.2",
      status: "pending",
      createdAt: 0,
      expiresAt: 1,
    });
    expect(fitsSlack(rec(plan(50)))).toEqual({ ok: true });
    // 50 actions of about 1,450 characters: two per section, 25 sections and the frame fit.
    expect(fitsSlack(rec(plan(50, `0x${"c".repeat(680)}`)))).toEqual({ ok: true });
    const distinct = plan(50);
    // One action per section (about 2,900 characters each): 50 sections and the frame do not.
    distinct.actions = distinct.actions.map((a, i) => {
      const to = `0x${String(i).padStart(2, "0")}${"d".repeat(1400)}`;
      return { ...a, arguments: { ...a.arguments, to }, spend: { ...a.spend!, recipient: to } };
    });
    const over = fitsSlack(rec(distinct));
    expect(over).toMatchObject({ ok: false });
    expect(over.ok === false && over.reason).toMatch(/needs \d+ blocks, more than the 50/);
  });
});
