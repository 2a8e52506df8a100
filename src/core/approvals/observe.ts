/**
 * Approvals as operators see them: `neo_approvals_total{outcome}` and one info line per decision
 * (conversation, approval id, outcome, who decided). Recorded where the outcome is settled: the
 * broker's atomic settle (once across instances) and core_execute's cap refusal.
 */

import { metrics } from "../../ops/metrics.js";
import type { ConversationKey, UserKey } from "../keys.js";
import { log } from "../log.js";

const approvalLog = log.child({ component: "approvals" });

export type ApprovalOutcome =
  | "approved"
  | "rejected"
  | "expired"
  | "cancelled"
  | "interrupted"
  | "refused_cap";

export function recordApprovalRequested(conversation: ConversationKey, approvalId: string): void {
  metrics.approvals.inc({ outcome: "requested" });
  approvalLog.info({ conversation, approvalId }, "approval requested");
}

export function recordApprovalDecision(d: {
  conversation: ConversationKey;
  /** Null for a cap refusal: nothing was offered. */
  approvalId: string | null;
  outcome: ApprovalOutcome;
  /** The clicker or admin; null when the system settled it (expiry, cap, could not be shown). */
  decidedBy: UserKey | null;
}): void {
  metrics.approvals.inc({ outcome: d.outcome });
  approvalLog.info(d, "approval decided");
}
