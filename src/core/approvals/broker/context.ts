/**
 * What the broker's pieces share: the store and audit log, the clock and settings, the per-user
 * open slots, and this process's live state (who waits on which approval, which channel shows it).
 * Built once by `createApprovalBroker`; each piece takes it as its first argument.
 */
import type { EventEmitter } from "node:events";
import type { Store } from "../../../store/types.js";
import type { UserKey } from "../../keys.js";
import type { AuditEvent, AuditLog } from "../audit.js";
import type { SpendCaps } from "../caps.js";
import type { OpenSlots } from "../open-slots.js";
import type { ApprovalChannel, ApprovalRecord } from "../types.js";

export interface BrokerContext {
  store: Store;
  audit: AuditLog;
  now: () => number;
  /** How long an approval stays open. */
  ttlMs: number;
  /** How long its record (and message reference) is kept: the audit retention. */
  recordTtlMs: number;
  /** How often a waiter reads the store for a decision taken on another instance. */
  pollMs: number;
  /** Written on the approvals this instance waits for, so its restart closes those it left open. */
  instanceId: string;
  slots: OpenSlots;
  caps?: Pick<SpendCaps, "reserve" | "settle">;
  /** Emits an approval's id when this process settles it, so its waiter wakes without a poll. */
  decided: EventEmitter;
  /** The channel showing each approval this process offered, kept until its last re-render. */
  channels: Map<string, ApprovalChannel>;
}

/** One audit entry about `rec`, stamped now. */
export async function auditApproval(
  ctx: BrokerContext,
  event: AuditEvent,
  rec: ApprovalRecord,
  actor: UserKey | null,
  detail?: string,
): Promise<void> {
  await ctx.audit.append({
    at: ctx.now(),
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
