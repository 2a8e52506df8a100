/**
 * Authority over approvals, on Slack end to end (signed slash commands and clicks into the real
 * Bolt app, the loop, the embedded executor over the fixture wallet that logs every execution):
 * - `/neo deny` of a user with a pending approval closes it at once (message updated, buttons
 *   gone, the admin named); their later click executes nothing;
 * - Bob's `/neo reset` of Ann's thread is refused and changes nothing; Ann's own reset closes her
 *   approval as cancelled by her, with the reason, not as her decision.
 */
import { afterEach, describe, expect, it } from "vitest";
import { click, envelope, mention, slashCommand, TEAM, userTs } from "../slack/support/harness.js";
import {
  blockText,
  hasButtons,
  isPlan,
  isTurn,
  type SlackWallet,
  startSlackWallet,
} from "./support/slack-wallet.js";

function neo(h: SlackWallet, user: string, text: string) {
  return h.slack.command(slashCommand(h.fake.baseUrl, user, text, "C5"));
}
const replyText = (r: { body: string }) => String((JSON.parse(r.body) as { text?: string }).text);

let h: SlackWallet | undefined;
afterEach(async () => {
  const open = h;
  h = undefined;
  await open?.close();
});

/** Ann asks for a 5 USDC transfer in a new thread; resolves with the approval message and id. */
async function pendingApproval(wallet: SlackWallet, answered = true) {
  wallet.ep.script(
    { match: isTurn, reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "send 5" } }] } },
    {
      match: isPlan,
      reply: {
        toolCalls: [{ name: "wallet__transfer", arguments: { to: "0xabc", amount: "5", asset: "USDC" } }],
      },
    },
    // A reset turn ends without asking the model again.
    ...(answered ? [{ match: isTurn, reply: { text: "Not sent." } }] : []),
  );
  const ts = userTs();
  await wallet.slack.event(envelope(mention("C5", "UANN", "send 5", { ts })));
  await wallet.fake.waitFor(() => wallet.fake.messages("C5", ts).some(hasButtons), "approval", 30_000);
  const msg = wallet.fake.messages("C5", ts).find(hasButtons)!;
  const id = blockText(msg).match(/"value":"([^"]+)"/)![1]!;
  const current = () => wallet.fake.messages("C5").find((m) => m.ts === msg.ts)!;
  return { ts, msg, id, current };
}

describe("Slack: authority over approvals", () => {
  it("deny revokes a pending approval at once; the later click executes nothing", async () => {
    h = await startSlackWallet();
    const wallet = h;
    const { msg, id, current } = await pendingApproval(wallet);
    const res = await neo(wallet, "UADMIN", "deny <@UANN>");
    expect(replyText(res)).toContain("Revoked 1 pending approval(s)");
    await wallet.fake.waitFor(() => !hasButtons(current()), "buttons gone", 15_000);
    expect(blockText(current())).toContain("Closed by <@UADMIN>: Neo access withdrawn by an admin");
    await click(wallet, msg, "UANN", "neo_approve", id);
    await wallet.fake.waitFor(
      () =>
        wallet.fake
          .callsTo("chat.postEphemeral")
          .some((c) => String(c.args.text).includes("already cancelled")),
      "refused click",
      15_000,
    );
    expect(wallet.walletLog()).toEqual([]);
    const rec = (await wallet.broker.get(id))!;
    expect(rec).toMatchObject({ status: "cancelled", decidedBy: `slack:${TEAM}:UADMIN` });
    const audit = (await wallet.broker.audit.recent(10)).filter((e) => e.approvalId === id);
    expect(audit.find((e) => e.event === "cancelled")).toMatchObject({ actor: `slack:${TEAM}:UADMIN` });
  }, 60_000);

  it("Bob's reset of Ann's thread is refused; Ann's own reset closes her approval as hers", async () => {
    h = await startSlackWallet();
    const wallet = h;
    const { ts, id, current } = await pendingApproval(wallet, false);
    const link = `https://fake.slack.com/archives/C5/p${ts.replace(".", "")}`;
    const bob = await neo(wallet, "UBOB", `reset ${link}`);
    expect(replyText(bob)).toContain("only the people who spoke in that thread");
    expect((await wallet.broker.get(id))!.status).toBe("pending");
    expect(hasButtons(current())).toBe(true);

    const ann = await neo(wallet, "UANN", `reset ${link}`);
    expect(replyText(ann)).toContain("starts over");
    const rec = (await wallet.broker.get(id))!;
    expect(rec).toMatchObject({
      status: "cancelled",
      decidedBy: `slack:${TEAM}:UANN`,
      note: "the thread was reset",
    });
    await wallet.fake.waitFor(() => !hasButtons(current()), "buttons gone", 15_000);
    expect(wallet.walletLog()).toEqual([]);
  }, 60_000);
});
