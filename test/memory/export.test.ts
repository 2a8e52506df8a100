/**
 * `/neo memory export`'s data (issue 32, item 3) over the real pager, usage store and approval
 * broker on the file store: a Discord person's records, usage and approvals from two guilds are
 * theirs; another person's approval they decided shows what and when, never who asked; nothing of
 * anyone else's memory or usage is in it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createAuditLog } from "../../src/core/approvals/audit.js";
import { createApprovalBroker } from "../../src/core/approvals/broker.js";
import { createUsageStore } from "../../src/core/usage/usage-store.js";
import { createPager } from "../../src/memory/cortex/pager.js";
import { exportUserData } from "../../src/memory/export.js";
import { createStore } from "../../src/store/create-store.js";
import { transferPlan } from "../approvals/support/plans.js";
import { recordingChannel } from "../approvals/support/recording-channel.js";

const ANN_G1 = "discord:G1:1111111111";
const ANN_G2 = "discord:G2:1111111111";
const BOB = "discord:G1:2222222222";
const ADMIN = "discord:G1:3333333333";

describe("the export of one person's data", () => {
  it("holds their records, usage and approvals from every guild, and nothing of anyone else", async () => {
    const store = await createStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-export-")), prefix: "neo:" });
    const pager = createPager({ store });
    const broker = createApprovalBroker({
      instanceId: "t",
      store,
      audit: createAuditLog(store),
      ttlMs: 60_000,
      pollMs: 20,
      isAdmin: (u) => u === ADMIN,
    });
    const learned = { kind: "private", workspace: "G1" } as const;
    await pager.rememberFact("discord:@me:1111111111", "Ann's locker is 5150", {
      conversation: "discord:G1:C9:T9",
      learned,
    });
    await pager.rememberFact("discord:@me:2222222222", "Bob's badge is QZX-9090");
    const usage = createUsageStore(store);
    const call = { tokens: 10, promptTokens: 8, cachedTokens: 0, costUsd: 0.5, at: Date.UTC(2026, 10, 28) };
    await usage.add({ ...call, user: ANN_G1 });
    await usage.add({ ...call, user: ANN_G2 });
    await usage.add({ ...call, user: BOB, costUsd: 9 });
    const ch = recordingChannel();
    const mine = await broker.request(
      transferPlan("5", "USDC", ANN_G2),
      { userKey: ANN_G2, displayName: "Ann" },
      "discord:G2:C1:T1",
      ch,
    );
    const bobs = await broker.request(
      transferPlan("7", "USDC", BOB),
      { userKey: BOB, displayName: "Bob" },
      "discord:G1:C1:T2",
      ch,
    );
    await broker.cancel(bobs.id, ADMIN);

    const ann = await exportUserData(store, pager, ANN_G1, Date.UTC(2026, 10, 28, 12));
    expect(ann.facts).toEqual([
      expect.objectContaining({
        statement: "Ann's locker is 5150",
        place: "private",
        workspace: "G1",
        channel: "C9",
      }),
    ]);
    expect(ann.usage).toEqual([
      expect.objectContaining({ period: "2026-11", usd: 1, modelCalls: 2 }),
      expect.objectContaining({ period: "2026-11-28", usd: 1, modelCalls: 2 }),
    ]);
    expect(ann.approvals.requested).toEqual([expect.objectContaining({ id: mine.id, status: "pending" })]);
    expect(ann.approvals.decided).toEqual([]);
    const annText = JSON.stringify(ann);
    expect(annText).not.toMatch(/QZX|Bob|2222222222/);
    expect(annText).not.toContain(bobs.id);

    // The admin decided Bob's: what and when, not who asked.
    const admin = await exportUserData(store, pager, ADMIN);
    expect(admin.approvals.decided).toEqual([
      expect.objectContaining({ id: bobs.id, status: "cancelled", summary: bobs.plan.summary }),
    ]);
    expect(admin.approvals.audit.map((e) => [e.event, e.requester])).toEqual([["cancelled", "someone else"]]);
    expect(JSON.stringify(admin)).not.toMatch(/Bob|2222222222/);
    await store.close();
  });
});
