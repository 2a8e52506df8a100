/**
 * `/neo forget` erases more than the cortex (issue 32, item 2), on both stores: the person's pending
 * approvals are closed and their usage counts deleted with their memory, and none of it is left in
 * the store (every key and value read) or, for the file store, in its files (raw bytes). Another
 * person's data stays.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAuditLog } from "../../src/core/approvals/audit.js";
import { createApprovalBroker } from "../../src/core/approvals/broker.js";
import { cortexOwner } from "../../src/core/keys.js";
import { createUsageStore, DEPLOYMENT } from "../../src/core/usage/usage-store.js";
import { ErasureIncompleteError, eraseUser } from "../../src/core/user-data.js";
import { createPager } from "../../src/memory/cortex/pager.js";
import { recordingChannel } from "../approvals/support/recording-channel.js";
import { foundInStore, foundOnDisk } from "../support/on-disk.js";
import { BACKENDS, type Backend } from "./support/stores.js";

const ANN = { userKey: "slack:T1:UANN", displayName: "Ann" };
const BOB = { userKey: "slack:T1:UBOB", displayName: "Bob" };
const CONV = "slack:T1:C1:1.1";

const plan = (requester: string, summary: string) => ({
  id: `plan_${summary}`,
  intent: summary,
  summary,
  actions: [
    {
      tool: "wallet__transfer",
      arguments: { to: "0xabc", amount: "5" },
      spend: { amount: "5", asset: "USDC", recipient: "0xabc" },
    },
  ],
  requester,
  createdAt: Date.now(),
});

for (const { name, factory, skip } of BACKENDS) {
  describe.skipIf(skip)(`erasure: ${name}`, () => {
    let backend: Backend;
    afterEach(async () => {
      await backend.cleanup();
    });

    it("forget closes the person's pending approvals and deletes their usage with their memory", async () => {
      backend = factory("erasure");
      const store = await backend.open();
      const pager = createPager({ store });
      const broker = createApprovalBroker({
        store,
        audit: createAuditLog(store),
        ttlMs: 60_000,
        instanceId: "t",
      });
      const usage = createUsageStore(store);
      const at = Date.now();
      for (const u of [ANN, BOB])
        await usage.add({ user: u.userKey, tokens: 10, promptTokens: 7, cachedTokens: 0, costUsd: 0.01, at });
      await pager.rememberFact(ANN.userKey, "Ann's locker code is orchid-7731");
      await pager.recordTurn(ANN.userKey, {
        conversation: CONV,
        user: "ann asks zebra-4411",
        assistant: "noted",
      });
      await pager.rememberFact(BOB.userKey, "Bob keeps falcon-2208");
      const annRec = await broker.request(plan(ANN.userKey, "ann-transfer"), ANN, CONV, recordingChannel());
      const bobRec = await broker.request(plan(BOB.userKey, "bob-transfer"), BOB, CONV, recordingChannel());

      const n = await eraseUser(
        {
          store,
          approvals: broker,
          tools: { eraseUser: async () => {} },
          conversations: { erase: async () => 0 },
          forgetMemory: async (u) => {
            const gone = await pager.forgetUser(cortexOwner(u));
            await store.purge();
            return gone;
          },
        },
        ANN.userKey,
        ANN.userKey,
      );

      expect(n).toBe(2);
      expect((await broker.get(annRec.id))?.status).toBe("cancelled");
      expect((await broker.get(bobRec.id))?.status).toBe("pending");
      const today = { kind: "day" as const, at };
      expect((await usage.totals(ANN.userKey, today)).calls).toBe(0);
      expect((await usage.totals(BOB.userKey, today)).calls).toBe(1);
      expect((await usage.totals(DEPLOYMENT, today)).calls).toBe(2);
      // Her id is nowhere: the approvals keep who asked and who decided under a pseudonym.
      const erased = ["orchid-7731", "zebra-4411", ANN.userKey, "UANN"];
      expect(await foundInStore(store, erased)).toEqual([]);
      expect((await foundInStore(store, ["falcon-2208", BOB.userKey])).length).toBeGreaterThan(0);
      const audit = await broker.audit.recent(100);
      const alias = (await broker.get(annRec.id))!.requester.userKey;
      expect(alias).toMatch(/^erased-[0-9a-f]{8}$/);
      expect(audit.map((e) => [e.event, e.requester, e.actor])).toEqual([
        ["requested", alias, alias],
        ["requested", BOB.userKey, BOB.userKey],
        ["cancelled", alias, alias],
      ]);
      const dir = backend.options.dataDir;
      if (name === "file") expect(foundOnDisk(dir, erased)).toEqual([]);
    });

    it("a part that cannot be done now (a busy conversation) does not stop the rest; the error names it", async () => {
      backend = factory("erasure-partial");
      const store = await backend.open();
      const pager = createPager({ store });
      await pager.rememberFact(ANN.userKey, "Ann's locker code is orchid-7731");
      const busy = new Error("conversation busy on another instance");
      const erasing = eraseUser(
        {
          store,
          approvals: createApprovalBroker({
            store,
            audit: createAuditLog(store),
            ttlMs: 60_000,
            instanceId: "t",
          }),
          tools: { eraseUser: async () => {} },
          conversations: {
            erase: async () => {
              throw busy;
            },
          },
          forgetMemory: (u) => pager.forgetUser(cortexOwner(u)),
        },
        ANN.userKey,
        ANN.userKey,
      );
      await expect(erasing).rejects.toThrow(ErasureIncompleteError);
      await expect(erasing).rejects.toThrow(/transcripts \(conversation busy on another instance\)/);
      expect(await foundInStore(store, ["orchid-7731"])).toEqual([]);
    });
  });
}
