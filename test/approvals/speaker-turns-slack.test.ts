/**
 * One turn, one speaker, with memory and approvals (issue 15 acceptance), on Slack end to end: the
 * real Bolt app, conversations layer, loop, memory (cortex faulting into the system block) and
 * core_execute through the embedded executor over the fixture wallet.
 *
 * Ann asks Neo to send 5 USDC in a thread; her turn waits on her approval. Meanwhile Bob writes in
 * the same thread. Bob's words must not reach any request of Ann's turn; when Ann's turn ends, Bob's
 * message is answered in Bob's own turn, with Bob's memory only, and the approval it triggers is
 * Bob's (names him, only he may decide).
 *
 * Events are `app_mention` payloads as Slack sends them (https://api.slack.com/events/app_mention),
 * a reply in a thread carrying `thread_ts`; clicks are `block_actions` payloads
 * (https://api.slack.com/reference/interaction-payloads/block-actions).
 */
import { afterEach, describe, expect, it } from "vitest";
import { click, envelope, mention, TEAM, userTs } from "../slack/support/harness.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { blockText, hasButtons, isPlan, type SlackWallet, startSlackWallet } from "./support/slack-wallet.js";

const ANN = `slack:${TEAM}:UANN`;
const BOB = `slack:${TEAM}:UBOB`;
const ANN_FACT = "Ann's favourite colour is TEAL-ANN-11";
const BOB_FACT = "Bob's favourite colour is OCHRE-BOB-22";
const BOB_WORDS = "send 3 USDC to 0xdef for the OCHRE-LUNCH";

const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";
const sent = (r: ScriptedRequest) => `${r.system}\n${JSON.stringify(r.messages)}`;

let h: SlackWallet | undefined;
afterEach(async () => {
  const open = h;
  h = undefined;
  await open?.close();
});

describe("Slack: one turn, one speaker, with memory and approvals", () => {
  it("Bob's message during Ann's turn waits for Bob's own turn, with Bob's memory, and his approval names him", async () => {
    h = await startSlackWallet({ memory: true });
    const wallet = h;
    // What each person told Neo earlier in this public channel (so it may be shown here).
    const origin = {
      conversation: `slack:${TEAM}:C1:1690000000.000001`,
      learned: { kind: "public", workspace: TEAM },
    } as const;
    await wallet.memory!.pager.rememberUserFact(ANN, ANN_FACT, origin);
    await wallet.memory!.pager.rememberUserFact(BOB, BOB_FACT, origin);

    const annRequests: ScriptedRequest[] = [];
    const bobRequests: ScriptedRequest[] = [];
    wallet.ep.script(
      {
        label: "ann asks to send",
        match: isTurn,
        expect: (r) => void annRequests.push(r),
        reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "send 5 USDC to 0xabc" } }] },
      },
      {
        label: "ann's plan",
        match: isPlan,
        reply: {
          toolCalls: [{ name: "wallet__transfer", arguments: { to: "0xabc", amount: "5", asset: "USDC" } }],
        },
      },
      {
        label: "ann's answer",
        match: isTurn,
        expect: (r) => void annRequests.push(r),
        reply: { text: "Not sent, as you rejected it." },
      },
      { label: "ann's write-back", match: isWriteback, reply: { text: "{}" } },
      {
        label: "bob asks to send",
        match: isTurn,
        expect: (r) => void bobRequests.push(r),
        reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "send 3 USDC to 0xdef" } }] },
      },
      {
        label: "bob's plan",
        match: isPlan,
        reply: {
          toolCalls: [{ name: "wallet__transfer", arguments: { to: "0xdef", amount: "3", asset: "USDC" } }],
        },
      },
      {
        label: "bob's answer",
        match: isTurn,
        expect: (r) => void bobRequests.push(r),
        reply: { text: "Not sent either." },
      },
      { label: "bob's write-back", match: isWriteback, reply: { text: "{}" } },
    );

    const ts = userTs();
    await wallet.slack.event(envelope(mention("C1", "UANN", "send 5 USDC to 0xabc", { ts })));
    await wallet.fake.waitFor(
      () => wallet.fake.messages("C1", ts).some(hasButtons),
      "Ann's approval",
      30_000,
    );
    const annApproval = wallet.fake.messages("C1", ts).find(hasButtons)!;
    const annId = blockText(annApproval).match(/"value":"([^"]+)"/)![1]!;

    // Bob, in the same thread, while Ann's turn waits on her approval (journaled when Slack gets 200).
    const bobTs = userTs();
    const res = await wallet.slack.event(
      envelope(mention("C1", "UBOB", BOB_WORDS, { ts: bobTs, thread_ts: ts })),
    );
    expect(res.status).toBe(200);
    await click(wallet, annApproval, "UANN", "neo_reject", annId);

    // Bob's own turn asks for Bob's approval.
    await wallet.fake.waitFor(
      () => wallet.fake.messages("C1", ts).filter(hasButtons).length === 1 && bobRequests.length === 1,
      "Bob's approval",
      30_000,
    );
    const bobApproval = wallet.fake.messages("C1", ts).find((m) => hasButtons(m) && m.ts !== annApproval.ts)!;
    expect(bobApproval).toBeDefined();
    const bobId = blockText(bobApproval).match(/"value":"([^"]+)"/)![1]!;
    expect((await wallet.broker.get(bobId))!.requester.userKey).toBe(BOB);
    expect(blockText(bobApproval)).toContain("for Bob");
    expect(blockText(bobApproval)).not.toContain("for Ann");
    // Ann cannot decide Bob's approval; Bob can.
    await click(wallet, bobApproval, "UANN", "neo_reject", bobId);
    await wallet.fake.waitFor(
      () => wallet.fake.callsTo("chat.postEphemeral").length > 0,
      "Ann's click refused",
      15_000,
    );
    expect((await wallet.broker.get(bobId))!.status).toBe("pending");
    await click(wallet, bobApproval, "UBOB", "neo_reject", bobId);
    await wallet.fake.waitFor(() => bobRequests.length === 2, "Bob's answer", 30_000);
    await wallet.memory!.drained();

    // Ann's turn: her memory, never Bob's words or memory.
    expect(annRequests).toHaveLength(2);
    for (const r of annRequests) {
      expect(r.system).toContain("TEAL-ANN-11");
      expect(sent(r)).not.toContain("OCHRE");
    }
    // Bob's turn: his words and his memory only.
    for (const r of bobRequests) {
      expect(r.system).toContain("OCHRE-BOB-22");
      expect(r.system).not.toContain("TEAL-ANN-11");
      expect(r.system).toContain("This turn is for Bob");
    }
    expect(JSON.stringify(bobRequests[0]!.messages)).toContain("OCHRE-LUNCH");
    expect(wallet.walletLog()).toEqual([]);
  }, 90_000);
});
