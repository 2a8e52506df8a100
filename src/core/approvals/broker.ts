/**
 * The approval broker: binds one plan to one requester, persists it, shows it through the
 * conversation's ApprovalChannel, and accepts exactly one decision from the requester before expiry.
 * The decision is consumed atomically (`Store.take` of a one-time token), so concurrent clicks,
 * clicks on other instances and clicks after a restart are all decided once. Fails closed when the
 * store cannot be reached.
 */

import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import type { Store } from "../../store/types.js";
import type { ConversationKey, Speaker, UserKey } from "../keys.js";
import { log } from "../log.js";
import type { AuditEvent, AuditLog } from "./audit.js";
import type { SpendCaps } from "./caps.js";
import { ApprovalLimitError, ApprovalStoreError } from "./errors.js";
import { INTERRUPTED_NOTES, markInterrupted, markStarted } from "./interrupted.js";
import { recordApprovalDecision, recordApprovalRequested } from "./observe.js";
import { createOpenSlots } from "./open-slots.js";
import { hashPlan } from "./plan-hash.js";
import { PlanRefusedError, planSizeProblem } from "./plan-view.js";
import { refusal } from "./refusals.js";
import type {
  ApprovalChannel,
  ApprovalRecord,
  ApprovalStatus,
  DecideResult,
  Decision,
  Outcome,
  Plan,
} from "./types.js";

/** Decided records stay readable this long, so late clicks get the true reason. */
const RECORD_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** The token outlives the expiry so the waiter (not the TTL) settles it as expired. */
const TOKEN_GRACE_MS = 10 * 60 * 1000;

export interface ApprovalBrokerOptions {
  store: Store;
  audit: AuditLog;
  /** How long an approval stays open (NEO_APPROVAL_TTL_SECONDS × 1000). */
  ttlMs: number;
  /**
   * This instance's id (`NEO_INSTANCE_ID`, stable across its restarts): written on the approvals it
   * waits for, so that at its restart it closes those it left open (`recoverInterrupted`).
   */
  instanceId: string;
  /** How often a waiter reads the store for a decision taken on another instance. Default 500 ms. */
  pollMs?: number;
  /** Who may cancel approvals. */
  isAdmin?: (userKey: UserKey) => boolean;
  /** Open (pending) approvals one requester may have at once (NEO_MAX_PENDING_APPROVALS). Default 3. */
  maxPendingPerUser?: number;
  /** Spend caps: Approve reserves the plan's amounts atomically, or closes the approval over the cap. */
  caps?: Pick<SpendCaps, "reserve" | "settle">;
  now?: () => number;
}

export interface ApprovalBroker {
  /**
   * Persist a pending approval and present it. Throws `PlanRefusedError` when the plan is too big
   * or cannot be shown in full on the channel, `ApprovalLimitError` when the requester already has
   * `maxPendingPerUser` open, `ApprovalStoreError` when the store is away (nothing offered).
   */
  request(
    plan: Plan,
    requester: Speaker,
    conversation: ConversationKey,
    channel: ApprovalChannel,
  ): Promise<ApprovalRecord>;
  /** A button click. Only the requester, only while pending, only once. */
  decide(approvalId: string, clicker: UserKey, decision: Decision): Promise<DecideResult>;
  /** Resolves with the settled record: approved, rejected, expired or cancelled (also on abort). */
  waitForDecision(approvalId: string, signal?: AbortSignal): Promise<ApprovalRecord>;
  /**
   * Mark an approved record as running, atomically, just before the executor is called. False when
   * it is no longer approved-and-not-started (a restart closed it as interrupted): do not execute.
   */
  startExecution(approvalId: string): Promise<boolean>;
  /**
   * At start-up, before taking clicks: close as interrupted every approval this instance left open
   * when it died (pending ones, and approved ones without an outcome), re-rendered through
   * `channelFor` (buttons gone, the clicker still named). Resolves with how many were closed.
   */
  recoverInterrupted(
    channelFor: (conversation: ConversationKey) => ApprovalChannel | undefined,
  ): Promise<number>;
  /** Attach the execution outcome to an approved record, audit it and re-render. */
  complete(approvalId: string, outcome: Outcome): Promise<void>;
  /** Admin cancel of a pending approval. */
  cancel(approvalId: string, by: UserKey): Promise<DecideResult>;
  /**
   * Close every pending approval `user` requested, as `by` (an admin who denied them or changed
   * their cap), with `note` on the message. Resolves with how many were closed.
   */
  revokeUser(user: UserKey, by: UserKey, note: string): Promise<number>;
  /** Close every pending approval of a conversation, as `by` (who reset it). */
  cancelConversation(conversation: ConversationKey, by: UserKey, note: string): Promise<number>;
  /** Pending, unexpired approvals (admin view). */
  listPending(): Promise<ApprovalRecord[]>;
  get(approvalId: string): Promise<ApprovalRecord | undefined>;
  readonly audit: AuditLog;
}

/** A fresh approval id: 128 random bits, URL-safe, fits any button payload. */
export function newApprovalId(): string {
  return `apv_${randomBytes(16).toString("base64url")}`;
}

export function createApprovalBroker(opts: ApprovalBrokerOptions): ApprovalBroker {
  const { store, audit, ttlMs } = opts;
  const pollMs = opts.pollMs ?? 500;
  const now = opts.now ?? Date.now;
  const isAdmin = opts.isAdmin ?? (() => false);
  const recKey = (id: string) => `approvals:rec:${id}`;
  const tokenKey = (id: string) => `approvals:token:${id}`;
  const refKey = (id: string) => `approvals:ref:${id}`;
  const slots = createOpenSlots(store, opts.maxPendingPerUser ?? 3, now, RECORD_TTL_MS);
  const decided = new EventEmitter();
  decided.setMaxListeners(0);
  const channels = new Map<string, ApprovalChannel>();

  async function load(id: string): Promise<ApprovalRecord | undefined> {
    const rec = await store.get<ApprovalRecord>(recKey(id));
    if (!rec) return undefined;
    const ref = await store.get<string>(refKey(id));
    return ref === undefined ? rec : { ...rec, messageRef: ref };
  }

  function assertHealthy(what: string): void {
    if (!store.healthy()) throw new ApprovalStoreError(what);
  }

  async function record(event: AuditEvent, rec: ApprovalRecord, actor: UserKey | null, detail?: string) {
    await audit.append({
      at: now(),
      event,
      actor,
      approvalId: rec.id,
      planId: rec.plan.id,
      requester: rec.requester.userKey,
      summary: rec.plan.summary,
      planHash: rec.planHash,
      ...(detail === undefined ? {} : { detail }),
    });
  }

  /**
   * Consume the token and write the final status; undefined when someone else settled it first.
   * `gate` runs once the token is ours (so only for the one winner): a reason it returns closes the
   * approval as cancelled with that note instead (Approve over the cap).
   */
  async function settle(
    rec: ApprovalRecord,
    wanted: Exclude<ApprovalStatus, "pending">,
    actor: UserKey | null,
    detail?: string,
    gate?: () => Promise<string | undefined>,
  ): Promise<ApprovalRecord | undefined> {
    const token = await store.take<string>(tokenKey(rec.id));
    if (token === undefined) return undefined;
    const refused = gate ? await gate() : undefined;
    const status = refused === undefined ? wanted : "cancelled";
    const note = refused ?? detail;
    const next: ApprovalRecord = {
      ...rec,
      status,
      decidedAt: now(),
      ...(actor ? { decidedBy: actor } : {}),
      ...(note === undefined ? {} : { note }),
    };
    // Audit before the status write: if the store fails in between, the record stays pending with
    // its token gone, so it can only expire; nothing runs unaudited.
    await record(refused === undefined ? status : "refused_cap", next, actor, note);
    await store.set(recKey(rec.id), next, RECORD_TTL_MS);
    await slots.free(rec);
    recordApprovalDecision({
      conversation: rec.conversation,
      approvalId: rec.id,
      outcome: status,
      decidedBy: actor,
    });
    decided.emit(rec.id);
    return next;
  }

  async function refuse(
    rec: ApprovalRecord | undefined,
    clicker: UserKey,
    reason: Parameters<typeof refusal>[0],
  ): Promise<DecideResult> {
    if (rec) {
      await record("refused_click", rec, clicker, reason).catch((err: unknown) => {
        log.warn({ err, approvalId: rec.id }, "could not audit a refused click");
      });
    }
    return { ok: false, reason, message: refusal(reason, rec) };
  }

  /** The cap reservation Approve makes, as a settle gate: a refusal reason, or none when reserved. */
  function reserve(rec: ApprovalRecord): (() => Promise<string | undefined>) | undefined {
    const caps = opts.caps;
    if (!caps) return undefined;
    return async () => {
      const r = await caps.reserve(rec.requester.userKey, rec.id, rec.plan);
      return r.ok ? undefined : r.reason;
    };
  }

  async function decideAs(
    approvalId: string,
    clicker: UserKey,
    status: "approved" | "rejected" | "cancelled",
    allowed: (rec: ApprovalRecord) => boolean,
  ): Promise<DecideResult> {
    try {
      assertHealthy("deciding");
      const rec = await load(approvalId);
      if (!rec) {
        assertHealthy("deciding");
        return refuse(undefined, clicker, "unknown");
      }
      if (!allowed(rec)) return refuse(rec, clicker, status === "cancelled" ? "not_admin" : "not_requester");
      if (rec.status === "expired") return refuse(rec, clicker, "expired");
      if (rec.status !== "pending") return refuse(rec, clicker, "already_decided");
      if (now() >= rec.expiresAt) {
        await settle(rec, "expired", null, "expired before the click");
        return refuse(rec, clicker, "expired");
      }
      const next = await settle(
        rec,
        status,
        clicker,
        undefined,
        status === "approved" ? reserve(rec) : undefined,
      );
      if (!next) {
        assertHealthy("deciding");
        return refuse(rec, clicker, "already_decided");
      }
      if (next.status !== status)
        return { ok: false, reason: "over_cap", message: refusal("over_cap", next) };
      return { ok: true, record: next };
    } catch (err) {
      log.error({ err, approvalId }, "approval decision failed: store unavailable");
      return { ok: false, reason: "store_unavailable", message: refusal("store_unavailable", undefined) };
    }
  }

  async function finish(rec: ApprovalRecord): Promise<ApprovalRecord> {
    const channel = channels.get(rec.id);
    if (rec.status !== "approved") channels.delete(rec.id);
    await channel?.update(rec).catch((err: unknown) => log.warn({ err }, "approval channel update failed"));
    return rec;
  }

  function wake(id: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        decided.off(id, done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      decided.once(id, done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  async function waitForDecision(approvalId: string, signal?: AbortSignal): Promise<ApprovalRecord> {
    let last: ApprovalRecord | undefined;
    for (;;) {
      const rec = await load(approvalId).catch((err: unknown) => {
        log.warn({ err, approvalId }, "approval poll failed; retrying until expiry");
        return last;
      });
      if (!rec) throw new ApprovalStoreError(`approval ${approvalId} vanished while waiting`);
      last = rec;
      if (rec.status !== "pending") return finish(rec);
      if (signal?.aborted) {
        // The turn was stopped; who stopped it is not known here, so no one is named as deciding.
        const settled = await settle(rec, "cancelled", null, "the turn was cancelled").catch(() => undefined);
        if (settled) return finish(settled);
      } else if (now() >= rec.expiresAt) {
        const settled = await settle(rec, "expired", null).catch(() => undefined);
        if (settled) return finish(settled);
        // Someone settled it a moment before us, or the store is down: give the winner a few polls
        // to write its status, then treat it as expired (nothing executes from here).
        if (now() >= rec.expiresAt + pollMs * 10) return finish({ ...rec, status: "expired" });
      }
      await wake(approvalId, Math.min(pollMs, Math.max(1, rec.expiresAt - now())), signal);
    }
  }

  async function pending(): Promise<ApprovalRecord[]> {
    const ids = (await store.keys("approvals:rec:")).map((k) => k.slice("approvals:rec:".length));
    const recs = await Promise.all(ids.map((id) => load(id)));
    const t = now();
    return recs
      .filter((r): r is ApprovalRecord => r !== undefined && r.status === "pending" && r.expiresAt > t)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Settle the matching pending approvals as cancelled by `by`; their waiters re-render them. */
  async function closeAll(match: (r: ApprovalRecord) => boolean, by: UserKey, note: string): Promise<number> {
    let closed = 0;
    for (const rec of (await pending()).filter(match)) {
      // A waiting core_execute re-renders its own message when woken; without one, render here.
      const waited = decided.listenerCount(rec.id) > 0;
      const done = await settle(rec, "cancelled", by, note);
      if (done) {
        closed++;
        if (!waited) await finish(done);
      }
    }
    return closed;
  }

  /** Approved, not started, not done → running; atomic against a concurrent `recoverInterrupted`. */
  async function startExecution(approvalId: string): Promise<boolean> {
    const started = await markStarted(store, recKey(approvalId), now(), RECORD_TTL_MS);
    if (started) await record("executing", started, null);
    return started !== undefined;
  }

  /** Close one approval this instance left open; the closed record, or undefined if it was not open. */
  async function interrupt(rec: ApprovalRecord): Promise<ApprovalRecord | undefined> {
    if (rec.status === "pending") {
      const expired = now() >= rec.expiresAt;
      return settle(
        rec,
        expired ? "expired" : "interrupted",
        null,
        expired ? undefined : INTERRUPTED_NOTES.pending,
      );
    }
    if (rec.status !== "approved" || rec.outcome) return undefined;
    const value = await markInterrupted(store, recKey(rec.id), RECORD_TTL_MS);
    if (!value) return undefined;
    await record("interrupted", value, null, `approved by ${value.decidedBy ?? "unknown"}; ${value.note}`);
    // Nothing ran: the cap reservation is released. Maybe something ran: it stays (fail closed).
    if (value.executionStartedAt === undefined)
      await opts.caps?.settle(value.requester.userKey, value.id, null);
    recordApprovalDecision({
      conversation: value.conversation,
      approvalId: value.id,
      outcome: "interrupted",
      decidedBy: value.decidedBy ?? null,
    });
    return value;
  }

  async function recoverInterrupted(
    channelFor: (conversation: ConversationKey) => ApprovalChannel | undefined,
  ): Promise<number> {
    let closed = 0;
    for (const key of await store.keys("approvals:rec:")) {
      const rec = await load(key.slice("approvals:rec:".length));
      if (!rec || rec.instance !== opts.instanceId) continue;
      const done = await interrupt(rec);
      if (!done) continue;
      closed++;
      log.info(
        { approvalId: rec.id, status: done.status, note: done.note },
        "approval left open by a restart closed",
      );
      const shown = rec.messageRef === undefined ? done : { ...done, messageRef: rec.messageRef };
      await channelFor(rec.conversation)
        ?.update(shown)
        .catch((err: unknown) =>
          log.warn({ err, approvalId: rec.id }, "could not re-render an interrupted approval"),
        );
    }
    return closed;
  }

  return {
    audit,
    get: load,
    startExecution,
    recoverInterrupted,
    waitForDecision,
    request: async (plan, requester, conversation, channel) => {
      const tooBig = planSizeProblem(plan);
      if (tooBig) throw new PlanRefusedError(tooBig);
      assertHealthy("offering an approval");
      const createdAt = now();
      const rec: ApprovalRecord = {
        id: newApprovalId(),
        plan,
        requester,
        conversation,
        status: "pending",
        planHash: hashPlan(plan),
        createdAt,
        expiresAt: createdAt + ttlMs,
        instance: opts.instanceId,
      };
      // Shown in full or not offered: a plan the platform cannot show whole is refused, never cut.
      const fit = channel.fits?.(rec) ?? { ok: true };
      if (!fit.ok) throw new PlanRefusedError(fit.reason);
      try {
        await slots.take(rec);
      } catch (err) {
        if (err instanceof ApprovalLimitError) throw err;
        throw new ApprovalStoreError("offering an approval", { cause: err });
      }
      try {
        await store.set(recKey(rec.id), rec, RECORD_TTL_MS);
        await store.set(tokenKey(rec.id), rec.id, ttlMs + TOKEN_GRACE_MS);
        // keyv-style stores can drop writes silently while the server is away: read back to be sure.
        if ((await store.get<string>(tokenKey(rec.id))) !== rec.id) throw new Error("write not readable");
        await record("requested", rec, requester.userKey);
      } catch (err) {
        await store.take(tokenKey(rec.id)).catch(() => undefined);
        await slots.free(rec);
        throw new ApprovalStoreError("offering an approval", { cause: err });
      }
      recordApprovalRequested(conversation, rec.id);
      channels.set(rec.id, channel);
      let ref: string | undefined;
      try {
        ref = await channel.present(rec);
      } catch (err) {
        channels.delete(rec.id);
        await settle(rec, "cancelled", null, "could not be shown").catch(() => undefined);
        throw err;
      }
      if (ref !== undefined) await store.set(refKey(rec.id), ref, RECORD_TTL_MS);
      return ref === undefined ? rec : { ...rec, messageRef: ref };
    },
    decide: (approvalId, clicker, decision) =>
      decideAs(
        approvalId,
        clicker,
        decision === "approve" ? "approved" : "rejected",
        (rec) => rec.requester.userKey === clicker,
      ),
    cancel: (approvalId, by) => decideAs(approvalId, by, "cancelled", () => isAdmin(by)),
    complete: async (approvalId, outcome) => {
      const rec = await load(approvalId);
      if (!rec) return;
      const next: ApprovalRecord = { ...rec, outcome };
      const { messageRef: _ref, ...stored } = next;
      await store.set(recKey(approvalId), stored, RECORD_TTL_MS);
      await record("executed", next, null, `${outcome.status}; tx ${outcome.txIds.join(", ") || "none"}`);
      const channel = channels.get(approvalId);
      channels.delete(approvalId);
      await channel
        ?.update(next)
        .catch((err: unknown) => log.warn({ err }, "approval channel update failed"));
    },
    revokeUser: (user, by, note) => closeAll((r) => r.requester.userKey === user, by, note),
    cancelConversation: (conversation, by, note) =>
      closeAll((r) => r.conversation === conversation, by, note),
    listPending: pending,
  };
}
