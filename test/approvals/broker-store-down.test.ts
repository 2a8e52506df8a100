/**
 * The broker fails closed when the store cannot be reached: nothing is offered, approved or
 * executed, and the clicker is told why. Uses a test-owned redis-server that the test kills.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAuditLog } from "../../src/core/approvals/audit.js";
import { createApprovalBroker } from "../../src/core/approvals/broker.js";
import { ApprovalStoreError } from "../../src/core/approvals/errors.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type OwnedRedis, ownedRedis, until } from "../memory/support/redis-server.js";
import { alice, conversation, transferPlan } from "./support/plans.js";
import { recordingChannel } from "./support/recording-channel.js";

let server: OwnedRedis | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  await server?.kill();
});

function brokerOver(s: Store) {
  return createApprovalBroker({
    instanceId: "test-instance",
    store: s,
    audit: createAuditLog(s),
    ttlMs: 60_000,
    pollMs: 20,
  });
}

describe("approval broker with the store unreachable", () => {
  it("offers nothing when the store is down", async () => {
    server = await ownedRedis(); // never started: nothing listens on its port
    store = await createStore({
      redisUrl: server.url,
      dataDir: "unused",
      prefix: "neo:",
      connectWaitMs: 200,
    });
    const b = brokerOver(store);
    const ch = recordingChannel();
    await expect(b.request(transferPlan(), alice, conversation, ch)).rejects.toBeInstanceOf(
      ApprovalStoreError,
    );
    expect(ch.presented).toHaveLength(0);
    const res = await b.decide("apv_anything", alice.userKey, "approve");
    expect(res).toMatchObject({ ok: false, reason: "store_unavailable" });
    expect(!res.ok && res.message).toContain("nothing was approved or executed");
  });

  it("a click while the store is down approves nothing and says why", async () => {
    server = await ownedRedis();
    await server.start();
    store = await createStore({ redisUrl: server.url, dataDir: "unused", prefix: "neo:" });
    const b = brokerOver(store);
    const rec = await b.request(transferPlan(), alice, conversation, recordingChannel());
    await server.kill();
    const s = store;
    await until(() => !s.healthy());
    expect(await b.decide(rec.id, alice.userKey, "approve")).toMatchObject({ reason: "store_unavailable" });
  });
});
