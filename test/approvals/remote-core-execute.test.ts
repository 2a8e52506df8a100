/**
 * core_execute over the remote executor, at the HTTP boundary (nock): the requester's click sends
 * `approve` and the pipeline's tx id reaches the tool result; a malformed plan offers nothing and
 * sends no decision.
 */
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccessPolicy } from "../../src/core/access/policy.js";
import { createAuditLog } from "../../src/core/approvals/audit.js";
import { createApprovalBroker } from "../../src/core/approvals/broker.js";
import { createSpendCaps } from "../../src/core/approvals/caps.js";
import { createCoreExecute } from "../../src/core/approvals/core-execute.js";
import { createRemoteExecutor } from "../../src/core/approvals/remote-executor.js";
import { createFileStore } from "../../src/store/file-store.js";
import type { Store } from "../../src/store/types.js";
import { tempDir } from "../tools/helpers.js";
import { alice, conversation } from "./support/plans.js";
import { recordingChannel } from "./support/recording-channel.js";

const BASE = "http://pipeline.test";
let store: Store;
beforeEach(() => nock.disableNetConnect());
afterEach(async () => {
  nock.cleanAll();
  nock.enableNetConnect();
  await store?.close();
});

async function coreExecuteWith(approve: boolean) {
  store = await createFileStore({ dataDir: join(tempDir("remote-ce"), "data"), prefix: "neo:" });
  const broker = createApprovalBroker({
    instanceId: "test-instance",
    store,
    audit: createAuditLog(store),
    ttlMs: 60_000,
    pollMs: 10,
  });
  const channel = recordingChannel((rec) => {
    if (approve) void broker.decide(rec.id, alice.userKey, "approve");
  });
  const run = createCoreExecute({
    executor: createRemoteExecutor({ url: BASE, timeoutMs: 500, retries: 0, pollMs: 10 }),
    broker,
    caps: createSpendCaps({ store }),
    access: createAccessPolicy({ store, isAdmin: () => false }),
  });
  const statuses: string[] = [];
  const ctx = {
    conversation,
    speaker: alice,
    place: { kind: "dm", workspace: "local" } as const,
    reporter: {
      say: async () => {},
      status: async (t: string) => {
        statuses.push(t);
      },
      notice: async () => {},
    },
    approvals: channel,
    signal: new AbortController().signal,
    step: { callIds: ["call_1"] },
  };
  return { run, ctx, channel, statuses };
}

const plan = {
  summary: "transfer 5 USDC to 0xabc",
  actions: [{ tool: "wallet__transfer", arguments: { to: "0xabc", amount: "5", asset: "USDC" } }],
};

describe("core_execute over the remote executor", () => {
  it("approve → the pipeline executes and its tx id is returned verbatim", async () => {
    const { run, ctx, channel } = await coreExecuteWith(true);
    const scope = nock(BASE)
      .post("/intents")
      .reply(202, { id: "int-1", status: "planning" })
      .get("/intents/int-1")
      .reply(200, { id: "int-1", status: "awaiting_approval", plan })
      .get("/intents/int-1")
      .reply(200, { id: "int-1", status: "awaiting_approval", plan })
      .post("/intents/int-1/decision", { decision: "approve" })
      .reply(202, { id: "int-1", status: "executing" })
      .get("/intents/int-1")
      .reply(200, {
        id: "int-1",
        status: "succeeded",
        outcome: {
          status: "success",
          results: [{ tool: "wallet__transfer", content: "ok", isError: false }],
          txIds: ["0xFEEDface42"],
        },
      });
    const result = await run("send 5 USDC to 0xabc", ctx);
    expect(result.isError).toBe(false);
    expect(result.content).toContain("Transaction ids: 0xFEEDface42");
    expect(channel.presented[0]!.plan.summary).toBe("transfer 5 USDC to 0xabc");
    expect(scope.isDone()).toBe(true);
  });

  it("a malformed plan offers nothing and sends no decision", async () => {
    const { run, ctx, channel } = await coreExecuteWith(true);
    nock(BASE)
      .post("/intents")
      .reply(202, { id: "int-2", status: "planning" })
      .get("/intents/int-2")
      .reply(200, { id: "int-2", status: "awaiting_approval", plan: { summary: "x", actions: "all of it" } });
    const decision = nock(BASE)
      .post("/intents/int-2/decision")
      .reply(202, { id: "int-2", status: "executing" });
    const result = await run("send 5 USDC to 0xabc", ctx);
    expect(result.isError).toBe(true);
    expect(result.content).toContain("unexpected shape");
    expect(result.content).toContain("Nothing was executed");
    expect(channel.presented).toHaveLength(0);
    expect(decision.isDone()).toBe(false);
  });
});
