/**
 * Caps that hold, on Slack end to end (real Bolt app against the fake Slack, the loop, the embedded
 * executor over the fixture wallet that logs every execution). Ann's cap is 10 USDC:
 * - a swap whose value cannot be read in USDC is refused before it is offered;
 * - two 8 USDC approvals clicked at the same moment, with a wallet that takes 2 s to confirm, move
 *   at most 10 USDC: Approve reserves atomically, the second click finds 8 reserved and is refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import { click, envelope, mention, TEAM, userTs } from "../slack/support/harness.js";
import {
  blockText,
  hasButtons,
  isPlan,
  isTurn,
  type SlackWallet,
  startSlackWallet,
} from "./support/slack-wallet.js";

const ANN = `slack:${TEAM}:UANN`;
const ADMIN = `slack:${TEAM}:UADMIN`;

let h: SlackWallet | undefined;
afterEach(async () => {
  const open = h;
  h = undefined;
  await open?.close();
});

describe("Slack: spend caps hold", () => {
  it("a swap of unknown value is refused under a 10 USDC cap; nothing is offered or run", async () => {
    h = await startSlackWallet();
    const wallet = h;
    await wallet.caps().setCap(ANN, "USDC", "10", ADMIN);
    wallet.ep.script(
      { match: isTurn, reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "swap 500" } }] } },
      {
        match: isPlan,
        reply: {
          toolCalls: [{ name: "wallet__swap", arguments: { amount: "500", from: "ETH", to: "USDC" } }],
        },
      },
      {
        match: isTurn,
        expect: (r) => {
          const result = String(r.messages.at(-1)?.content);
          expect(result).toContain("Refused before approval: over the spend cap");
          expect(result).toContain("unknown");
        },
        reply: { text: "Refused: over your cap." },
      },
    );
    const ts = userTs();
    await wallet.slack.event(envelope(mention("C5", "UANN", "swap 500", { ts })));
    await wallet.fake.waitFor(
      () => wallet.fake.callsTo("chat.postMessage").some((c) => c.args.text === "Refused: over your cap."),
      "the answer",
      30_000,
    );
    expect(wallet.fake.messages("C5", ts).some(hasButtons)).toBe(false);
    expect(wallet.walletLog()).toEqual([]);
  }, 60_000);

  it("two 8 USDC approvals clicked at once with a slow wallet move at most 10 USDC", async () => {
    h = await startSlackWallet({ walletEnv: { WALLET_DELAY_MS: "2000" } });
    const wallet = h;
    await wallet.caps().setCap(ANN, "USDC", "10", ADMIN);
    const send8 = {
      toolCalls: [{ name: "wallet__transfer", arguments: { to: "0xabc", amount: "8", asset: "USDC" } }],
    };
    wallet.ep.script(
      { match: isTurn, reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "send 8" } }] } },
      { match: isTurn, reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "send 8" } }] } },
      { match: isPlan, reply: send8 },
      { match: isPlan, reply: send8 },
      { match: isTurn, reply: { text: "first done" } },
      { match: isTurn, reply: { text: "second done" } },
    );
    const t1 = userTs();
    const t2 = userTs();
    await wallet.slack.event(envelope(mention("C5", "UANN", "send 8", { ts: t1 })));
    await wallet.slack.event(envelope(mention("C6", "UANN", "send 8", { ts: t2 })));
    await wallet.fake.waitFor(
      () =>
        wallet.fake.messages("C5", t1).some(hasButtons) && wallet.fake.messages("C6", t2).some(hasButtons),
      "both approvals",
      30_000,
    );
    const m1 = wallet.fake.messages("C5", t1).find(hasButtons)!;
    const m2 = wallet.fake.messages("C6", t2).find(hasButtons)!;
    const id1 = blockText(m1).match(/"value":"([^"]+)"/)![1]!;
    const id2 = blockText(m2).match(/"value":"([^"]+)"/)![1]!;
    await Promise.all([
      click(wallet, m1, "UANN", "neo_approve", id1),
      click(wallet, m2, "UANN", "neo_approve", id2),
    ]);
    await wallet.fake.waitFor(
      () =>
        wallet.fake.callsTo("chat.postMessage").filter((c) => String(c.args.text).endsWith(" done"))
          .length === 2,
      "both answers",
      60_000,
    );
    const moved = wallet.walletLog().reduce((n, t) => n + Number(t.amount), 0);
    expect(moved).toBeLessThanOrEqual(10);
    expect(wallet.walletLog()).toHaveLength(1);
    // The refused click was told why, and its message says it closed over the cap.
    const eph = wallet.fake.callsTo("chat.postEphemeral").map((c) => String(c.args.text));
    expect(eph.some((t) => t.includes("Not approved: over the spend cap"))).toBe(true);
    const records = await Promise.all([wallet.broker.get(id1), wallet.broker.get(id2)]);
    expect(records.map((r) => r!.status).sort()).toEqual(["approved", "cancelled"]);
    expect(await wallet.caps().spent(ANN)).toEqual({ USDC: "8" });
  }, 90_000);
});
