/**
 * core_execute end to end through the REAL loop: scripted model → core_execute → embedded executor
 * (planner over the Escalate tools of the real fixture wallet MCP server) → broker → console
 * `Approve? [y/N]` answered through a stream → execution → outcome back to the model.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { ESCALATION_NOTICE } from "../../src/core/approvals/core-execute.js";
import { ann, input, recordingMemory, testContext, testLimits } from "../support/agent-kit.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { type Harness, startHarness, turnContext } from "./support/harness.js";
import { recordingChannel } from "./support/recording-channel.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const isPlan = (r: ScriptedRequest) => r.purpose === "plan";
const isTurn = (r: ScriptedRequest) => r.purpose !== "plan";
const lastTool = (r: ScriptedRequest) => {
  const m = r.messages.at(-1)!;
  expect(m.role).toBe("tool");
  return String(m.content);
};

function scriptTransfer(harness: Harness, amount = "5") {
  harness.ep.script(
    {
      label: "model asks core_execute",
      match: isTurn,
      reply: { toolCalls: [{ name: "core_execute", arguments: { intent: `Send ${amount} USDC to 0xabc` } }] },
    },
    {
      label: "planner",
      match: isPlan,
      expect: (r) => {
        // Only the Escalate-class tools are offered to the planner.
        expect(r.tools.map((t) => t.function.name)).toEqual(["wallet__swap", "wallet__transfer"]);
      },
      reply: { toolCalls: [{ name: "wallet__transfer", arguments: { to: "0xabc", amount, asset: "USDC" } }] },
    },
  );
}

function scriptAnswer(harness: Harness, seen: string[]) {
  harness.ep.script({
    label: "model reports the outcome",
    match: isTurn,
    reply: (r) => {
      const content = lastTool(r);
      seen.push(content);
      const tx = /0x[0-9a-f]{64}/.exec(content)?.[0];
      return { text: tx ? `Done. Transaction id: ${tx}` : `Not done: ${content}` };
    },
  });
}

describe("core_execute through the real loop, wallet MCP server and console approval", () => {
  it("approve → the transfer runs exactly once and its tx id reaches the model and the answer", async () => {
    h = await startHarness();
    scriptTransfer(h);
    const seen: string[] = [];
    scriptAnswer(h, seen);
    const ctx = turnContext(h);
    h.answer("y");
    const result = await h.agent.chat(input("send 5 USDC to 0xabc"), ctx);

    const log = h.walletLog();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ kind: "transfer", amount: "5", asset: "USDC", to: "0xabc" });
    const tx = log[0]!.id;
    expect(seen[0]).toContain(`Transaction ids: ${tx}`);
    expect(seen[0]).toContain(`sent 5 USDC to 0xabc: tx ${tx}`);
    expect(result.status).toBe("answered");
    expect(result.text).toContain(tx);
    expect(h.consoleOutput()).toContain("Approve? [y/N]");
    expect(h.consoleOutput()).toContain("wallet__transfer");
    expect(ctx.reporter.statuses.some((s) => s.startsWith("Waiting for Ann to approve"))).toBe(true);
    // Escalation (rung 3) is a deliberate visible promise: a Notice, not a passing Status.
    expect(ctx.reporter.notices).toEqual([ESCALATION_NOTICE]);
    expect(ctx.reporter.statuses).not.toContain(ESCALATION_NOTICE);
    const events = (await h.broker.audit.recent(10)).map((e) => e.event);
    expect(events).toEqual(["requested", "approved", "executing", "executed"]);
    expect(await h.caps.spent(ann.userKey)).toEqual({ USDC: "5" });
  });

  it("reject → nothing runs and the model is told the user rejected it", async () => {
    h = await startHarness();
    scriptTransfer(h);
    const seen: string[] = [];
    scriptAnswer(h, seen);
    h.answer("n");
    await h.agent.chat(input("send 5 USDC to 0xabc"), turnContext(h));
    expect(h.walletLog()).toHaveLength(0);
    expect(seen[0]).toContain("rejected by the user");
    expect(seen[0]).toContain("Nothing was executed");
  });

  it("expiry → nothing runs and the model is told it expired", async () => {
    h = await startHarness({ ttlMs: 300 });
    scriptTransfer(h);
    const seen: string[] = [];
    scriptAnswer(h, seen);
    // Nobody answers the console prompt.
    await h.agent.chat(input("send 5 USDC to 0xabc"), turnContext(h));
    expect(h.walletLog()).toHaveLength(0);
    expect(seen[0]).toContain("expired");
    expect(seen[0]).toContain("Nothing was executed");
    expect(h.consoleOutput()).toContain("Expired without a decision");
  });

  it("over the cap → refused before any approval is offered", async () => {
    h = await startHarness();
    await h.caps.setCap(ann.userKey, "usdc", "3", "console:local:admin");
    scriptTransfer(h);
    const seen: string[] = [];
    scriptAnswer(h, seen);
    await h.agent.chat(input("send 5 USDC to 0xabc"), turnContext(h));
    expect(h.walletLog()).toHaveLength(0);
    expect(seen[0]).toContain("over the spend cap");
    expect(seen[0]).toContain("above the cap of 3 USDC");
    expect(h.consoleOutput()).not.toContain("Approve?");
    expect((await h.broker.audit.recent(10)).map((e) => e.event)).toEqual(["refused_cap"]);
  });

  it("two concurrent approve clicks execute the transfer exactly once", async () => {
    let broker: Harness["broker"] | undefined;
    const results: Array<Promise<unknown>> = [];
    const channel = recordingChannel((rec) => {
      results.push(
        Promise.all([
          broker!.decide(rec.id, ann.userKey, "approve"),
          broker!.decide(rec.id, ann.userKey, "approve"),
        ]),
      );
    });
    h = await startHarness({ channel });
    broker = h.broker;
    scriptTransfer(h);
    const seen: string[] = [];
    scriptAnswer(h, seen);
    await h.agent.chat(input("send 5 USDC to 0xabc"), turnContext(h));
    const [decisions] = (await Promise.all(results)) as [Array<{ ok: boolean }>];
    expect(decisions.filter((d) => d.ok)).toHaveLength(1);
    expect(h.walletLog()).toHaveLength(1);
  });

  it("a denied user cannot reach core_execute", async () => {
    h = await startHarness();
    await h.access.deny(ann.userKey, "console:local:admin");
    h.ep.script({
      match: isTurn,
      reply: { toolCalls: [{ name: "core_execute", arguments: { intent: "Send 5 USDC to 0xabc" } }] },
    });
    const seen: string[] = [];
    scriptAnswer(h, seen);
    await h.agent.chat(input("send 5 USDC to 0xabc"), turnContext(h));
    expect(seen[0]).toContain("not allowed to use Neo");
    expect(h.ep.requests.filter(isPlan)).toHaveLength(0);
    expect(h.walletLog()).toHaveLength(0);
  });

  it("while one conversation waits for approval, another conversation runs to its answer", async () => {
    h = await startHarness();
    const harness = h;
    scriptTransfer(harness);
    const seen: string[] = [];
    harness.ep.script({
      label: "other conversation",
      match: (r) => String(r.messages[0]?.content).includes("capital of France"),
      reply: { text: "Paris." },
    });
    scriptAnswer(harness, seen);
    const waitingCtx = turnContext(harness);
    const waiting = harness.agent.chat(input("send 5 USDC to 0xabc"), waitingCtx);
    // Wait until the approval is on screen, i.e. the first turn is blocked on the decision.
    for (let i = 0; i < 500 && !harness.consoleOutput().includes("Approve?"); i++) {
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(harness.consoleOutput()).toContain("Approve?");
    const { llm } = createLlmForTest(harness.ep);
    const other = createAgent({
      llm,
      tools: harness.surface,
      memory: recordingMemory(),
      limits: testLimits(),
    });
    const answered = await other.chat(
      input("capital of France?"),
      testContext({ conversation: "console:local:tty:other" }),
    );
    expect(answered.text).toBe("Paris.");
    expect(harness.walletLog()).toHaveLength(0);
    harness.answer("y");
    await waiting;
    expect(harness.walletLog()).toHaveLength(1);
    expect(seen[0]).toContain(harness.walletLog()[0]!.id);
  });
});
