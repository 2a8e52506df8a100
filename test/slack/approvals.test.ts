/**
 * Spend approvals on Slack, end to end: the real broker presents the plan through the adapter's
 * ApprovalChannel; signed block_actions clicks go through the real Bolt app to `broker.decide`.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Executor } from "../../src/core/approvals/executor.js";
import type { ApprovalRecord, Plan } from "../../src/core/approvals/types.js";
import { conversationKey } from "../../src/core/keys.js";
import type { FakeMessage } from "../fakes/slack/fake-slack.js";
import {
  click,
  envelope,
  type Harness,
  mention,
  startHarness,
  TEAM,
  until,
  userTs,
} from "./support/harness.js";

const THREAD = "1690000000.000777";
const CONV = conversationKey({ platform: "slack", workspace: TEAM, channel: "C9", thread: THREAD });
const ANN = { userKey: `slack:${TEAM}:UANN`, displayName: "Ann" };

function plan(): Plan {
  return {
    id: `plan_${Math.random().toString(36).slice(2)}`,
    intent: "send 5 USDC to 0xabc",
    summary: "Send 5 USDC to 0xabc",
    actions: [
      {
        tool: "wallet__send",
        arguments: { to: "0xabc", amount: "5", asset: "USDC" },
        spend: { amount: "5", asset: "USDC", recipient: "0xabc" },
      },
    ],
    requester: ANN.userKey,
    createdAt: Date.now(),
  };
}

const blockText = (m: FakeMessage | undefined) => JSON.stringify(m?.blocks ?? []);
const hasButtons = (m: FakeMessage | undefined) => blockText(m).includes('"type":"actions"');

async function present(h: Harness): Promise<{ rec: ApprovalRecord; msg: () => FakeMessage }> {
  const rec = await h.broker.request(plan(), ANN, CONV, h.adapter.io(CONV).approvals);
  await h.fake.waitFor(() => h.fake.messages("C9", THREAD).length === 1, "approval message");
  const ts = h.fake.messages("C9", THREAD)[0]!.ts;
  return { rec, msg: () => h.fake.messages("C9").find((m) => m.ts === ts)! };
}

describe("Slack approvals", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("shows the plan with buttons carrying only the approval id; the requester approves; the outcome follows", async () => {
    h = await startHarness();
    const { rec, msg } = await present(h);
    const shown = msg();
    expect(shown.thread_ts).toBe(THREAD);
    expect(blockText(shown)).toContain("send 5 USDC to 0xabc");
    expect(blockText(shown)).toContain(rec.planHash);
    expect(blockText(shown)).toContain("wallet__send");
    expect(blockText(shown)).toContain("5 USDC → `0xabc`");
    const actions = (shown.blocks as Array<{ type: string; elements?: Array<{ value?: string }> }>).find(
      (b) => b.type === "actions",
    )!;
    expect(actions.elements!.map((e) => e.value)).toEqual([rec.id, rec.id]);

    const decided = h.broker.waitForDecision(rec.id);
    expect((await click(h, shown, "UANN", "neo_approve", rec.id)).status).toBe(200);
    expect((await decided).status).toBe("approved");
    await h.fake.waitFor(() => blockText(msg()).includes("Approved by <@UANN>"), "approved render");
    expect(hasButtons(msg())).toBe(false);

    await h.broker.complete(rec.id, {
      status: "success",
      results: [{ tool: "wallet__send", content: "sent tx 0xfeed01", isError: false }],
      notRun: [],
      txIds: ["0xfeed01"],
    });
    await h.fake.waitFor(() => blockText(msg()).includes("0xfeed01"), "outcome render");
    expect(blockText(msg())).toContain("Approved by <@UANN>");
    expect(h.fake.callsTo("chat.postEphemeral")).toEqual([]);
  });

  it("tells anyone else why their click did nothing, ephemerally, and changes nothing", async () => {
    h = await startHarness();
    const { rec, msg } = await present(h);
    const before = h.fake.callsTo("chat.update").length;
    expect((await click(h, msg(), "UBOB", "neo_approve", rec.id)).status).toBe(200);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postEphemeral").length === 1, "ephemeral refusal");
    const eph = h.fake.callsTo("chat.postEphemeral")[0]!;
    expect(eph.args.user).toBe("UBOB");
    expect(eph.args.channel).toBe("C9");
    expect(String(eph.args.text)).toContain("Only Ann can approve");
    expect((await h.broker.get(rec.id))!.status).toBe("pending");
    expect(h.fake.callsTo("chat.update").length).toBe(before);
    expect(hasButtons(msg())).toBe(true);
  });

  it("an expired approval says so and loses its buttons; a late click is refused", async () => {
    h = await startHarness({ approvalTtlMs: 300 });
    const { rec, msg } = await present(h);
    await until("expiry", () => Date.now() > rec.expiresAt);
    expect((await click(h, msg(), "UANN", "neo_approve", rec.id)).status).toBe(200);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postEphemeral").length === 1, "ephemeral refusal");
    expect(String(h.fake.callsTo("chat.postEphemeral")[0]!.args.text)).toContain("expired");
    await h.fake.waitFor(() => blockText(msg()).includes("Expired"), "expired render");
    expect(hasButtons(msg())).toBe(false);
    expect((await h.broker.get(rec.id))!.status).toBe("expired");
  });

  it("through the loop: core_execute asks in the thread, the requester approves, the outcome and answer follow", async () => {
    const executed: string[] = [];
    const executor: Executor = {
      kind: "embedded",
      plan: async (intent, requester) => ({
        ...plan(),
        id: "plan-loop",
        intent,
        requester: requester.userKey,
      }),
      execute: async (approvedPlan) => {
        executed.push(approvedPlan.id);
        return {
          status: "success",
          results: [{ tool: "wallet__send", content: "sent: tx 0xfeed42", isError: false }],
          notRun: [],
          txIds: ["0xfeed42"],
        };
      },
      discard: async () => {},
    };
    h = await startHarness({
      executor,
      turns: [
        { reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "send 5 USDC to 0xabc" } }] } },
        {
          reply: (req) => ({
            text: `Done: ${String(req.messages.at(-1)?.content).match(/0x[0-9a-f]+/)?.[0]}`,
          }),
        },
      ],
    });
    const ts = userTs();
    await h.slack.event(envelope(mention("C5", "UANN", "send 5 USDC to 0xabc", { ts })));
    await h.fake.waitFor(() => h!.fake.messages("C5", ts).some(hasButtons), "approval buttons in the thread");
    const approval = h.fake.messages("C5", ts).find(hasButtons)!;
    expect(executed).toEqual([]);
    const value = JSON.stringify(approval.blocks).match(/"value":"([^"]+)"/)![1]!;
    await click(h, approval, "UANN", "neo_approve", value);
    await h.fake.waitFor(
      () => h!.fake.callsTo("chat.postMessage").some((c) => c.args.text === "Done: 0xfeed42"),
      "answer with the tx id",
    );
    expect(executed).toEqual(["plan-loop"]);
    const after = h.fake.messages("C5").find((m) => m.ts === approval.ts)!;
    await h.fake.waitFor(
      () => blockText(h!.fake.messages("C5").find((m) => m.ts === approval.ts)).includes("0xfeed42"),
      "outcome",
    );
    expect(blockText(after)).toContain("Approved by <@UANN>");
    expect(hasButtons(after)).toBe(false);
    await until("status removed", () => !h!.fake.messages("C5").some((m) => m.text.startsWith("_")));
  });
});
