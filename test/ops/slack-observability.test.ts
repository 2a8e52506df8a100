/**
 * What an operator sees of one real Slack conversation: a turn with MCP tool calls (ok, transport
 * failure, unknown tool), a core_execute approval clicked in Slack, a retried and a re-sent delivery,
 * Neo's own post coming back, and a 429 from Slack. Each counter moves by exactly what happened, with
 * bounded labels, and the structured log has one line per inbound event, turn, tool call and approval
 * decision, each carrying the conversation key and never a tool argument's value.
 */
import { afterEach, describe, expect, it } from "vitest";
import { conversationKey } from "../../src/core/keys.js";
import type { FakeMessage } from "../fakes/slack/fake-slack.js";
import { click, envelope, mention, TEAM, until, userTs } from "../slack/support/harness.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { captureLogs, delta, type LogCapture, snapshot } from "./support/observe.js";
import { type SlackStack, startSlackStack } from "./support/slack-stack.js";

let s: SlackStack | undefined;
let logs: LogCapture | undefined;
afterEach(async () => {
  logs?.stop();
  logs = undefined;
  await s?.close();
  s = undefined;
});

const isPlan = (r: ScriptedRequest) => r.purpose === "plan";
const isTurn = (r: ScriptedRequest) => r.purpose !== "plan";
const blocks = (m: FakeMessage) => JSON.stringify(m.blocks ?? []);
const hasButtons = (m: FakeMessage) => blocks(m).includes('"type":"actions"');

describe("ops: Slack metrics and logs", () => {
  it("counts and logs one conversation's inbound events, turn, tool calls, approval and 429", async () => {
    s = await startSlackStack();
    const stack = s;
    const ts = userTs();
    const conv = conversationKey({ platform: "slack", workspace: TEAM, channel: "C7", thread: ts });
    stack.ep.script(
      {
        label: "three calls: an MCP tool, a crashing one, an invented one",
        match: isTurn,
        reply: {
          toolCalls: [
            { name: "wallet__get_balance", arguments: { asset: "USDC" } },
            { name: "crasher__crash", arguments: {} },
            { name: "made_up_tool", arguments: { secret: "hunter2-value" } },
          ],
        },
      },
      {
        label: "core_execute",
        match: isTurn,
        reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "Send 5 USDC to 0xabc" } }] },
      },
      {
        label: "planner",
        match: isPlan,
        reply: {
          toolCalls: [{ name: "wallet__transfer", arguments: { to: "0xabc", amount: "5", asset: "USDC" } }],
        },
      },
      { label: "answer", match: isTurn, reply: { text: "Done: sent 5 USDC." } },
    );
    stack.fake.inject429("chat.postMessage", 1, 0);
    const before = await snapshot();
    logs = captureLogs();

    const first = envelope(mention("C7", "UANN", "check my balance, then send 5 USDC to 0xabc", { ts }));
    expect((await stack.slack.event(first)).status).toBe(200);
    // Slack's retry of the same delivery, then the same message under another event id.
    expect((await stack.slack.event(first, { retryNum: 1 })).status).toBe(200);
    const resent = envelope(mention("C7", "UANN", "check my balance, then send 5 USDC to 0xabc", { ts }));
    expect((await stack.slack.event(resent)).status).toBe(200);
    // Neo's own post in the channel comes back as an event: ignored on purpose.
    const own = { type: "message", channel: "C7", user: stack.fake.botUserId, text: "hello", ts: userTs() };
    expect((await stack.slack.event(envelope(own))).status).toBe(200);

    await stack.fake.waitFor(
      () => stack.fake.messages("C7", ts).some(hasButtons),
      "approval buttons",
      30_000,
    );
    const msg = stack.fake.messages("C7", ts).find(hasButtons)!;
    const approvalId = blocks(msg).match(/"value":"([^"]+)"/)![1]!;
    expect((await click(stack, msg, "UANN", "neo_approve", approvalId)).status).toBe(200);
    await stack.fake.waitFor(
      () => stack.fake.callsTo("chat.postMessage").some((c) => c.args.text === "Done: sent 5 USDC."),
      "the answer",
      30_000,
    );
    await until("the turn's end is logged", () => logs!.info("turn ended").length > 0, 15_000);
    const after = await snapshot();
    const d = delta(before, after);

    // Metrics: each counter moved by what happened, labels bounded (no argument or message text).
    expect(d("neo_inbound_messages_total", { platform: "slack", disposition: "accepted" })).toBe(1);
    expect(d("neo_inbound_messages_total", { platform: "slack", disposition: "duplicate" })).toBe(2);
    expect(d("neo_inbound_messages_total", { platform: "slack", disposition: "ignored" })).toBe(1);
    expect(d("neo_turns_total", { status: "answered" })).toBe(1);
    expect(d("neo_steps_total")).toBe(3);
    expect(d("neo_tool_calls_total", { tool: "wallet__get_balance", outcome: "ok" })).toBe(1);
    expect(d("neo_tool_calls_total", { tool: "crasher__crash", outcome: "transport_error" })).toBe(1);
    expect(d("neo_tool_calls_total", { tool: "unknown", outcome: "error" })).toBe(1);
    expect(d("neo_tool_calls_total", { tool: "core_execute", outcome: "ok" })).toBe(1);
    expect(d("neo_tool_calls_total", { tool: "wallet__transfer", outcome: "ok" })).toBe(1);
    expect(d("neo_approvals_total", { outcome: "requested" })).toBe(1);
    expect(d("neo_approvals_total", { outcome: "approved" })).toBe(1);
    expect(d("neo_platform_rate_limited_total", { platform: "slack" })).toBe(1);
    expect(d("neo_queue_wait_seconds_count")).toBe(1);
    expect(after.text).not.toContain("made_up_tool");
    expect(after.text).not.toContain("0xabc");

    // Logs: one info line per inbound event that reached the journal, per turn, tool call, decision.
    const inbound = logs.info("inbound");
    expect(inbound.map((l) => l.disposition)).toEqual(["accepted", "duplicate", "duplicate"]);
    for (const l of inbound)
      expect(l).toMatchObject({ platform: "slack", id: `${TEAM}/C7/${ts}`, conversation: conv });

    const turns = logs.info("turn ended");
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({ conversation: conv, status: "answered", steps: 3 });
    expect(turns[0]!.tokens).toBeGreaterThan(0);
    expect(typeof turns[0]!.durationMs).toBe("number");

    const calls = logs.info("tool call");
    expect(calls.map((l) => `${l.tool}:${l.outcome}`).sort()).toEqual([
      "core_execute:ok",
      "crasher__crash:transport_error",
      "unknown:error",
      "wallet__get_balance:ok",
      "wallet__transfer:ok",
    ]);
    for (const l of calls) {
      expect(l.conversation).toBe(conv);
      expect(typeof l.ms).toBe("number");
    }
    expect(calls.find((l) => l.tool === "wallet__transfer")!.argNames).toEqual(["to", "amount", "asset"]);
    // Argument names only: no value reaches the log.
    const callText = JSON.stringify(calls);
    for (const secret of ["0xabc", "hunter2-value", "Send 5 USDC"]) expect(callText).not.toContain(secret);

    const decided = logs.info("approval decided");
    expect(decided).toEqual([
      expect.objectContaining({
        conversation: conv,
        approvalId,
        outcome: "approved",
        decidedBy: `slack:${TEAM}:UANN`,
      }),
    ]);
    expect(logs.info("approval requested")).toEqual([
      expect.objectContaining({ conversation: conv, approvalId }),
    ]);
  });
});
