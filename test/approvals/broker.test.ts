/**
 * The approval broker on both stores: only the requester, only while pending, only once; every
 * other click changes nothing and says why; restarts and other instances see the same approval.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAuditLog } from "../../src/core/approvals/audit.js";
import { type ApprovalBroker, createApprovalBroker } from "../../src/core/approvals/broker.js";
import { INTERRUPTED_NOTES } from "../../src/core/approvals/interrupted.js";
import type { Store } from "../../src/store/types.js";
import { BACKENDS, type Backend, WITH_CLUSTER } from "../memory/support/stores.js";
import { alice, bob, conversation, transferPlan } from "./support/plans.js";
import { recordingChannel } from "./support/recording-channel.js";

const TTL = 60_000;

function broker(
  store: Store,
  clock?: { t: number },
  extra: { isAdmin?: (u: string) => boolean; instanceId?: string } = {},
) {
  return createApprovalBroker({
    instanceId: "test-instance",
    store,
    audit: createAuditLog(store),
    ttlMs: TTL,
    pollMs: 20,
    ...(clock ? { now: () => clock.t } : {}),
    ...extra,
  });
}

for (const backend of WITH_CLUSTER) {
  describe.skipIf(backend.skip)(`approval broker on the ${backend.name} store`, () => {
    let be: Backend;
    afterEach(async () => {
      await be?.cleanup();
    });

    async function open(): Promise<{ store: Store; b: ApprovalBroker }> {
      be = backend.factory("broker");
      const store = await be.open();
      return { store, b: broker(store) };
    }

    it("the requester approves: the record is approved, the waiter wakes, and it is audited", async () => {
      const { b } = await open();
      const ch = recordingChannel();
      const rec = await b.request(transferPlan(), alice, conversation, ch);
      expect(rec.id).toMatch(/^apv_[A-Za-z0-9_-]{22}$/);
      expect(ch.presented).toHaveLength(1);
      expect(rec.messageRef).toBe("msg-1");
      const waiting = b.waitForDecision(rec.id);
      const res = await b.decide(rec.id, alice.userKey, "approve");
      expect(res).toMatchObject({ ok: true, record: { status: "approved", decidedBy: alice.userKey } });
      expect((await waiting).status).toBe("approved");
      const audit = await b.audit.recent(10);
      expect(audit.map((e) => e.event)).toEqual(["requested", "approved"]);
      expect(audit[1]).toMatchObject({ actor: alice.userKey, requester: alice.userKey, approvalId: rec.id });
    });

    it("the requester rejects: status rejected, channel re-rendered", async () => {
      const { b } = await open();
      const ch = recordingChannel();
      const rec = await b.request(transferPlan(), alice, conversation, ch);
      const waiting = b.waitForDecision(rec.id);
      expect((await b.decide(rec.id, alice.userKey, "reject")).ok).toBe(true);
      expect((await waiting).status).toBe("rejected");
      expect(ch.updates.map((u) => u.status)).toEqual(["rejected"]);
    });

    it("someone else's click changes nothing and says who may decide", async () => {
      const { b } = await open();
      const rec = await b.request(transferPlan(), alice, conversation, recordingChannel());
      const res = await b.decide(rec.id, bob.userKey, "approve");
      expect(res).toMatchObject({ ok: false, reason: "not_requester" });
      expect(!res.ok && res.message).toContain("Only Alice");
      expect((await b.get(rec.id))?.status).toBe("pending");
      expect((await b.audit.recent(10)).at(-1)).toMatchObject({ event: "refused_click", actor: bob.userKey });
      // The requester can still decide afterwards.
      expect((await b.decide(rec.id, alice.userKey, "approve")).ok).toBe(true);
    });

    it("a second click changes nothing", async () => {
      const { b } = await open();
      const rec = await b.request(transferPlan(), alice, conversation, recordingChannel());
      expect((await b.decide(rec.id, alice.userKey, "reject")).ok).toBe(true);
      const second = await b.decide(rec.id, alice.userKey, "approve");
      expect(second).toMatchObject({ ok: false, reason: "already_decided" });
      expect((await b.get(rec.id))?.status).toBe("rejected");
    });

    it("a click after expiry changes nothing; the waiter settles it as expired", async () => {
      be = backend.factory("broker-expiry");
      const store = await be.open();
      const clock = { t: Date.now() };
      const b = broker(store, clock);
      const ch = recordingChannel();
      const rec = await b.request(transferPlan(), alice, conversation, ch);
      clock.t = rec.expiresAt + 1;
      const res = await b.decide(rec.id, alice.userKey, "approve");
      expect(res).toMatchObject({ ok: false, reason: "expired" });
      const settled = await b.waitForDecision(rec.id);
      expect(settled.status).toBe("expired");
      expect(ch.updates.map((u) => u.status)).toEqual(["expired"]);
      expect((await b.decide(rec.id, alice.userKey, "approve")).ok).toBe(false);
    });

    it("the waiter expires an undecided approval and re-renders it", async () => {
      be = backend.factory("broker-wait-expiry");
      const store = await be.open();
      const clock = { t: Date.now() };
      const b = broker(store, clock);
      const ch = recordingChannel();
      const rec = await b.request(transferPlan(), alice, conversation, ch);
      const waiting = b.waitForDecision(rec.id);
      clock.t = rec.expiresAt;
      expect((await waiting).status).toBe("expired");
      expect((await b.get(rec.id))?.status).toBe("expired");
      expect((await b.audit.recent(5)).map((e) => e.event)).toEqual(["requested", "expired"]);
    });

    it("an unknown id changes nothing", async () => {
      const { b } = await open();
      const res = await b.decide("apv_doesnotexist00000000", alice.userKey, "approve");
      expect(res).toMatchObject({ ok: false, reason: "unknown" });
    });

    it("two concurrent approvals of the same id: exactly one succeeds", async () => {
      const { store, b } = await open();
      const other = broker(store);
      const rec = await b.request(transferPlan(), alice, conversation, recordingChannel());
      const results = await Promise.all([
        b.decide(rec.id, alice.userKey, "approve"),
        other.decide(rec.id, alice.userKey, "approve"),
        b.decide(rec.id, alice.userKey, "approve"),
      ]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual([
        "already_decided",
        "already_decided",
      ]);
      const decisions = (await b.audit.recent(20)).filter((e) => e.event === "approved");
      expect(decisions).toHaveLength(1);
    });

    it("a restart between request and click: the new instance decides, the old waiter sees it", async () => {
      be = backend.factory("broker-restart");
      const first = await be.open();
      const before = broker(first);
      const rec = await before.request(transferPlan(), alice, conversation, recordingChannel());
      await first.close();
      const second = await be.open();
      const after = broker(second);
      expect((await after.get(rec.id))?.status).toBe("pending");
      expect(await after.decide(rec.id, bob.userKey, "approve")).toMatchObject({ reason: "not_requester" });
      expect(await after.decide(rec.id, alice.userKey, "approve")).toMatchObject({ ok: true });
      expect((await after.waitForDecision(rec.id)).status).toBe("approved");
    });

    it("decided before a restart: a click after it changes nothing", async () => {
      be = backend.factory("broker-restart-decided");
      const first = await be.open();
      const before = broker(first);
      const rec = await before.request(transferPlan(), alice, conversation, recordingChannel());
      expect((await before.decide(rec.id, alice.userKey, "approve")).ok).toBe(true);
      await first.close();
      const after = broker(await be.open());
      const res = await after.decide(rec.id, alice.userKey, "approve");
      expect(res).toMatchObject({ ok: false, reason: "already_decided" });
      expect(!res.ok && res.message).toContain("already approved");
    });

    it("a click on another broker instance wakes the waiter by polling the store", async () => {
      const { store, b } = await open();
      const elsewhere = broker(store);
      const rec = await b.request(transferPlan(), alice, conversation, recordingChannel());
      const waiting = b.waitForDecision(rec.id);
      expect((await elsewhere.decide(rec.id, alice.userKey, "reject")).ok).toBe(true);
      expect((await waiting).status).toBe("rejected");
    });

    it("admins cancel and list pending approvals; others cannot cancel", async () => {
      be = backend.factory("broker-admin");
      const store = await be.open();
      const b = broker(store, undefined, { isAdmin: (u) => u === bob.userKey });
      const one = await b.request(transferPlan("1"), alice, conversation, recordingChannel());
      const two = await b.request(transferPlan("2"), alice, conversation, recordingChannel());
      expect((await b.listPending()).map((r) => r.id).sort()).toEqual([one.id, two.id].sort());
      expect(await b.cancel(one.id, alice.userKey)).toMatchObject({ ok: false, reason: "not_admin" });
      expect(await b.cancel(one.id, bob.userKey)).toMatchObject({
        ok: true,
        record: { status: "cancelled" },
      });
      expect(await b.decide(one.id, alice.userKey, "approve")).toMatchObject({ reason: "already_decided" });
      expect((await b.listPending()).map((r) => r.id)).toEqual([two.id]);
    });

    it("six requests at once for one user: exactly three are offered (the open limit), the rest refused", async () => {
      const { b } = await open();
      const ch = recordingChannel();
      const tries = await Promise.allSettled(
        ["1", "2", "3", "4", "5", "6"].map((n) => b.request(transferPlan(n), alice, conversation, ch)),
      );
      const offered = tries.filter((t) => t.status === "fulfilled");
      const refused = tries.filter((t): t is PromiseRejectedResult => t.status === "rejected");
      expect(offered).toHaveLength(3);
      expect(ch.presented).toHaveLength(3);
      expect(refused.map((t) => (t.reason as Error).name)).toEqual(Array(3).fill("ApprovalLimitError"));
      // Another user is not limited by Alice's approvals; a decided one frees its place.
      await b.request(transferPlan("7", "USDC", bob.userKey), bob, conversation, ch);
      const first = (offered[0] as PromiseFulfilledResult<{ id: string }>).value;
      expect((await b.decide(first.id, alice.userKey, "reject")).ok).toBe(true);
      await b.request(transferPlan("8"), alice, conversation, ch);
      await expect(b.request(transferPlan("9"), alice, conversation, ch)).rejects.toThrow(
        "the requester already has 3 approvals waiting",
      );
    });

    it("a restart closes what this instance left open as interrupted, saying whether anything ran", async () => {
      be = backend.factory("broker-interrupted");
      const first = await be.open();
      const before = broker(first);
      const ch = recordingChannel();
      const waiting = await before.request(transferPlan("1"), alice, conversation, ch);
      const clicked = await before.request(transferPlan("2"), alice, conversation, ch);
      const running = await before.request(transferPlan("3"), alice, conversation, ch);
      const elsewhere = await broker(first, undefined, { instanceId: "other" }).request(
        transferPlan("4", "USDC", bob.userKey),
        bob,
        conversation,
        ch,
      );
      expect((await before.decide(clicked.id, alice.userKey, "approve")).ok).toBe(true);
      expect((await before.decide(running.id, alice.userKey, "approve")).ok).toBe(true);
      expect(await before.startExecution(running.id)).toBe(true);
      await first.close();

      const after = broker(await be.open());
      const shown = recordingChannel();
      expect(await after.recoverInterrupted(() => shown)).toBe(3);
      const rec = async (id: string) => (await after.get(id))!;
      expect(await rec(waiting.id)).toMatchObject({ status: "interrupted", note: INTERRUPTED_NOTES.pending });
      expect(await rec(clicked.id)).toMatchObject({
        status: "interrupted",
        decidedBy: alice.userKey,
        note: INTERRUPTED_NOTES.approved,
      });
      expect(await rec(running.id)).toMatchObject({ status: "interrupted", note: INTERRUPTED_NOTES.started });
      expect((await rec(elsewhere.id)).status).toBe("pending");
      expect(shown.updates.map((u) => u.status)).toEqual(["interrupted", "interrupted", "interrupted"]);
      // Nothing can start or be clicked after that.
      expect(await after.startExecution(clicked.id)).toBe(false);
      expect(await after.decide(waiting.id, alice.userKey, "approve")).toMatchObject({
        reason: "already_decided",
      });
      const audit = (await after.audit.recent(50)).filter((e) => e.event === "interrupted");
      expect(audit.map((e) => e.detail)).toContain(
        `approved by ${alice.userKey}; ${INTERRUPTED_NOTES.approved}`,
      );
      // A second recovery finds nothing left open.
      expect(await after.recoverInterrupted(() => shown)).toBe(0);
    });

    it("an aborted wait (turn cancelled) cancels the approval so a later click cannot run it", async () => {
      const { b } = await open();
      const rec = await b.request(transferPlan(), alice, conversation, recordingChannel());
      const ctl = new AbortController();
      const waiting = b.waitForDecision(rec.id, ctl.signal);
      ctl.abort();
      expect((await waiting).status).toBe("cancelled");
      expect(await b.decide(rec.id, alice.userKey, "approve")).toMatchObject({ reason: "already_decided" });
    });
  });
}

describe.skipIf(BACKENDS[0]!.skip)("two instances sharing Redis (separate connections)", () => {
  let be: Backend;
  afterEach(async () => {
    await be?.cleanup();
  });

  it("a click on instance B wakes the waiter on instance A; a double click across both decides once", async () => {
    be = BACKENDS[0]!.factory("broker-two-instances");
    const a = broker(await be.open());
    const b = broker(await be.open());
    const ch = recordingChannel();
    const rec = await a.request(transferPlan(), alice, conversation, ch);
    const waiting = a.waitForDecision(rec.id);
    const results = await Promise.all([
      b.decide(rec.id, alice.userKey, "approve"),
      a.decide(rec.id, alice.userKey, "approve"),
    ]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect((await waiting).status).toBe("approved");
    expect(ch.updates.map((u) => u.status)).toEqual(["approved"]);
  });
});
