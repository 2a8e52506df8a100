/**
 * The approval broker: binds one plan to one requester, persists it, shows it through the
 * conversation's ApprovalChannel, and accepts exactly one decision from the requester before expiry.
 * The decision is consumed atomically (`Store.take` of a one-time token), so concurrent clicks,
 * clicks on other instances and clicks after a restart are all decided once. Fails closed when the
 * store cannot be reached. This file is the API and its wiring; the pieces are in ./broker/.
 */

import { EventEmitter } from "node:events";
import type { Store } from "../../store/types.js";
import type { ConversationKey, Speaker, UserKey } from "../keys.js";
import type { AuditLog } from "./audit.js";
import { closePending, listPending } from "./broker/close-pending.js";
import type { BrokerContext } from "./broker/context.js";
import { decide } from "./broker/decide.js";
import { completeExecution, startExecution } from "./broker/execution.js";
import { offerApproval } from "./broker/offer.js";
import { loadRecord, RECORD_TTL_MS } from "./broker/records.js";
import { recoverInterrupted } from "./broker/recover.js";
import { waitForDecision } from "./broker/wait.js";
import type { SpendCaps } from "./caps.js";
import { createOpenSlots } from "./open-slots.js";
import { pseudonymiseApprovals } from "./pseudonymise.js";
import type { ApprovalChannel, ApprovalRecord, DecideResult, Decision, Outcome, Plan } from "./types.js";

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
  /** How long approval records are kept (NEO_AUDIT_RETENTION_DAYS). Default 365 days. */
  retentionMs?: number;
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
  /**
   * An erasure: every record and audit entry naming the person (`isTheirs` of a user key) names
   * `alias` instead (pseudonymise.ts); resolves with how many changed.
   */
  pseudonymise(isTheirs: (key: UserKey) => boolean, alias: string): Promise<number>;
  /** Pending, unexpired approvals (admin view). */
  listPending(): Promise<ApprovalRecord[]>;
  get(approvalId: string): Promise<ApprovalRecord | undefined>;
  readonly audit: AuditLog;
}

export function createApprovalBroker(opts: ApprovalBrokerOptions): ApprovalBroker {
  const { store, audit } = opts;
  const now = opts.now ?? Date.now;
  const isAdmin = opts.isAdmin ?? (() => false);
  const decided = new EventEmitter();
  decided.setMaxListeners(0);
  const ctx: BrokerContext = {
    store,
    audit,
    now,
    ttlMs: opts.ttlMs,
    recordTtlMs: opts.retentionMs ?? RECORD_TTL_MS,
    pollMs: opts.pollMs ?? 500,
    instanceId: opts.instanceId,
    slots: createOpenSlots(store, opts.maxPendingPerUser ?? 3, now, opts.retentionMs ?? RECORD_TTL_MS),
    caps: opts.caps,
    decided,
    channels: new Map(),
  };

  return {
    audit,
    get: (approvalId) => loadRecord(store, approvalId),
    startExecution: (approvalId) => startExecution(ctx, approvalId),
    recoverInterrupted: (channelFor) => recoverInterrupted(ctx, channelFor),
    waitForDecision: (approvalId, signal) => waitForDecision(ctx, approvalId, signal),
    request: (plan, requester, conversation, channel) =>
      offerApproval(ctx, plan, requester, conversation, channel),
    decide: (approvalId, clicker, decision) =>
      decide(
        ctx,
        approvalId,
        clicker,
        decision === "approve" ? "approved" : "rejected",
        (rec) => rec.requester.userKey === clicker,
      ),
    cancel: (approvalId, by) => decide(ctx, approvalId, by, "cancelled", () => isAdmin(by)),
    complete: (approvalId, outcome) => completeExecution(ctx, approvalId, outcome),
    revokeUser: (user, by, note) => closePending(ctx, (r) => r.requester.userKey === user, by, note),
    cancelConversation: (conversation, by, note) =>
      closePending(ctx, (r) => r.conversation === conversation, by, note),
    listPending: () => listPending(ctx),
    pseudonymise: (isTheirs, alias) => pseudonymiseApprovals(store, isTheirs, alias, ctx.recordTtlMs),
  };
}
