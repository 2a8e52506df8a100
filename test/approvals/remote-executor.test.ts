/**
 * The remote executor at the HTTP boundary (nock): happy path, pipeline failure, timeouts, bounded
 * retries and malformed answers. A malformed or failed planning step never sends a decision.
 */
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRemoteExecutor } from "../../src/core/approvals/remote-executor.js";
import type { Plan } from "../../src/core/approvals/types.js";
import type { ToolCallContext } from "../../src/core/tools/types.js";
import { alice } from "./support/plans.js";

const URL_BASE = "http://pipeline.test";
const ctx: ToolCallContext = {
  conversation: "console:local:term:main",
  speaker: alice,
  place: { kind: "dm", workspace: "local" },
  reporter: { say: async () => {}, status: async () => {}, notice: async () => {} },
  approvals: { present: async () => undefined, update: async () => {} },
  signal: new AbortController().signal,
  step: { callIds: ["call_1"] },
};

const plan = {
  summary: "transfer 5 USDC to 0xabc",
  actions: [{ tool: "wallet__transfer", arguments: { to: "0xabc", amount: "5", asset: "USDC" } }],
};

/** The plan core_execute hands back to `execute`: the one read from the pipeline and approved. */
function approved(id: string): Plan {
  return {
    id,
    intent: "send 5 USDC to 0xabc",
    summary: plan.summary,
    actions: [
      {
        tool: "wallet__transfer",
        arguments: { to: "0xabc", amount: "5", asset: "USDC" },
        spend: { amount: "5", asset: "USDC", recipient: "0xabc" },
      },
    ],
    requester: alice.userKey,
    createdAt: 0,
  };
}

function executor(over: Partial<Parameters<typeof createRemoteExecutor>[0]> = {}) {
  return createRemoteExecutor({ url: URL_BASE, timeoutMs: 500, retries: 1, pollMs: 10, ...over });
}

beforeEach(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

describe("remote executor", () => {
  it("happy path: submit, poll to a plan, approve, poll to the outcome", async () => {
    const submitted: unknown[] = [];
    const scope = nock(URL_BASE)
      .post("/intents", (b) => {
        submitted.push(b);
        return true;
      })
      .matchHeader("idempotency-key", /^[0-9a-f-]{36}$/)
      .reply(202, { id: "int-1", status: "planning" })
      .get("/intents/int-1")
      .reply(200, { id: "int-1", status: "planning" })
      .get("/intents/int-1")
      .reply(200, { id: "int-1", status: "awaiting_approval", plan });
    const ex = executor();
    const p = await ex.plan("send 5 USDC to 0xabc", alice, ctx);
    expect(submitted[0]).toEqual({
      intent: "send 5 USDC to 0xabc",
      requester: alice,
      conversation: ctx.conversation,
    });
    expect(p).toMatchObject({
      id: "int-1",
      summary: plan.summary,
      requester: alice.userKey,
      actions: [{ tool: "wallet__transfer", spend: { amount: "5", asset: "USDC", recipient: "0xabc" } }],
    });
    expect(scope.isDone()).toBe(true);

    const decided = nock(URL_BASE)
      .get("/intents/int-1")
      .reply(200, { id: "int-1", status: "awaiting_approval", plan })
      .post("/intents/int-1/decision", { decision: "approve" })
      .reply(202, { id: "int-1", status: "executing" })
      .get("/intents/int-1")
      .reply(200, { id: "int-1", status: "executing", plan })
      .get("/intents/int-1")
      .reply(200, {
        id: "int-1",
        status: "succeeded",
        outcome: {
          status: "success",
          results: [
            { tool: "wallet__transfer", content: "sent 5 USDC to 0xabc: tx 0xdeadbeef01", isError: false },
          ],
        },
      });
    const outcome = await ex.execute(p, ctx);
    expect(outcome).toEqual({
      status: "success",
      results: [
        { tool: "wallet__transfer", content: "sent 5 USDC to 0xabc: tx 0xdeadbeef01", isError: false },
      ],
      notRun: [],
      txIds: ["0xdeadbeef01"],
    });
    expect(decided.isDone()).toBe(true);
  });

  it("pipeline failure while planning: a clear error, no decision sent", async () => {
    nock(URL_BASE)
      .post("/intents")
      .reply(202, { id: "int-2", status: "planning" })
      .get("/intents/int-2")
      .reply(200, { id: "int-2", status: "failed", error: "no route for USDC on this chain" });
    const decision = nock(URL_BASE)
      .post("/intents/int-2/decision")
      .reply(202, { id: "int-2", status: "executing" });
    await expect(executor().plan("send 5 USDC", alice, ctx)).rejects.toMatchObject({
      code: "REMOTE_FAILED",
      message: expect.stringContaining("no route for USDC on this chain"),
    });
    expect(decision.isDone()).toBe(false);
  });

  it("pipeline failure while executing: the failed outcome is reported verbatim", async () => {
    nock(URL_BASE)
      .get("/intents/int-3")
      .reply(200, { id: "int-3", status: "awaiting_approval", plan })
      .post("/intents/int-3/decision")
      .reply(202, { id: "int-3", status: "executing" })
      .get("/intents/int-3")
      .reply(200, {
        id: "int-3",
        status: "failed",
        outcome: {
          status: "failure",
          results: [{ tool: "wallet__transfer", content: "insufficient USDC", isError: true }],
          notRun: [],
        },
      });
    const outcome = await executor().execute(approved("int-3"), ctx);
    expect(outcome).toMatchObject({
      status: "failure",
      txIds: [],
      results: [{ content: "insufficient USDC" }],
    });
  });

  it("a plan the pipeline changed after it was shown is not approved: no decision is sent", async () => {
    const changed = {
      ...plan,
      actions: [{ tool: "wallet__transfer", arguments: { to: "0xabc", amount: "900", asset: "USDC" } }],
    };
    nock(URL_BASE)
      .get("/intents/int-8")
      .reply(200, { id: "int-8", status: "awaiting_approval", plan: changed });
    const decision = nock(URL_BASE)
      .post("/intents/int-8/decision")
      .reply(202, { id: "int-8", status: "executing" });
    await expect(executor().execute(approved("int-8"), ctx)).rejects.toMatchObject({ code: "PLAN_MISMATCH" });
    expect(decision.isDone()).toBe(false);
  });

  it("a request that never answers times out after bounded retries", async () => {
    const scope = nock(URL_BASE)
      .post("/intents")
      .times(2)
      .delay(300)
      .reply(202, { id: "int-4", status: "planning" });
    await expect(executor({ timeoutMs: 50, retries: 1 }).plan("x", alice, ctx)).rejects.toMatchObject({
      code: "REMOTE_TIMEOUT",
      message: expect.stringContaining("after 2 attempts"),
    });
    expect(scope.isDone()).toBe(true);
  });

  it("planning that never finishes times out at the planning deadline", async () => {
    nock(URL_BASE)
      .post("/intents")
      .reply(202, { id: "int-5", status: "planning" })
      .get("/intents/int-5")
      .times(1000)
      .reply(200, { id: "int-5", status: "planning" });
    await expect(executor({ planTimeoutMs: 100 }).plan("x", alice, ctx)).rejects.toMatchObject({
      code: "REMOTE_TIMEOUT",
      message: expect.stringContaining('still "planning"'),
    });
  });

  it("a transient 503 is retried with the same idempotency key", async () => {
    const keys: string[] = [];
    nock(URL_BASE)
      .post("/intents")
      .times(2)
      .reply(function () {
        keys.push(String(this.req.headers["idempotency-key"]));
        return keys.length === 1 ? [503, "busy"] : [202, { id: "int-6", status: "planning" }];
      })
      .get("/intents/int-6")
      .reply(200, { id: "int-6", status: "awaiting_approval", plan });
    expect((await executor().plan("x", alice, ctx)).id).toBe("int-6");
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
  });

  it.each([
    ["non-JSON", "<html>oops</html>"],
    ["missing status", { id: "int-7" }],
    ["unknown status", { id: "int-7", status: "done" }],
    ["a float-ish amount", { id: "int-7", status: "awaiting_approval", plan: withSpend("5e3") }],
    ["no actions", { id: "int-7", status: "awaiting_approval", plan: { summary: "x", actions: [] } }],
    ["another intent's id", { id: "int-99", status: "awaiting_approval", plan }],
    ["executing without approval", { id: "int-7", status: "executing", plan }],
  ])("a malformed status answer (%s) is a clear error and nothing is approved", async (_label, body) => {
    nock(URL_BASE)
      .post("/intents")
      .reply(202, { id: "int-7", status: "planning" })
      .get("/intents/int-7")
      .reply(200, body as nock.Body);
    const decision = nock(URL_BASE)
      .post("/intents/int-7/decision")
      .reply(202, { id: "int-7", status: "executing" });
    await expect(executor().plan("x", alice, ctx)).rejects.toMatchObject({ code: "REMOTE_MALFORMED" });
    expect(decision.isDone()).toBe(false);
  });

  it("a malformed submit answer is a clear error", async () => {
    nock(URL_BASE).post("/intents").reply(202, { accepted: true });
    await expect(executor().plan("x", alice, ctx)).rejects.toMatchObject({
      code: "REMOTE_MALFORMED",
      message: expect.stringContaining("unexpected shape"),
    });
  });

  it("discard sends a reject decision", async () => {
    const scope = nock(URL_BASE)
      .post("/intents/int-8/decision", { decision: "reject" })
      .reply(202, { id: "int-8", status: "rejected" });
    await executor().discard("int-8");
    expect(scope.isDone()).toBe(true);
  });
});

function withSpend(amount: string) {
  return {
    summary: "x",
    actions: [{ tool: "t", arguments: {}, spend: { amount, asset: "USDC", recipient: null } }],
  };
}
