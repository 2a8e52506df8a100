/**
 * The approvals audit log: every request, decision, refusal, expiry and execution, appended to one
 * list in the store (who, what, when, outcome). Append-only; never rewritten.
 */
import type { Store } from "../../store/types.js";
import type { UserKey } from "../keys.js";

export type AuditEvent =
  | "requested"
  | "approved"
  | "rejected"
  | "expired"
  | "cancelled"
  | "refused_click"
  | "refused_cap"
  | "refused_plan"
  | "refused_access"
  /** Not offered: the requester's open approvals are at the limit, or the step already asked for one. */
  | "refused_limit"
  /** The executor was called (after this, a crash leaves the outcome unknown). */
  | "executing"
  | "executed"
  /** Found open at its instance's restart: closed, with whether it had started running. */
  | "interrupted";

export interface AuditEntry {
  at: number;
  event: AuditEvent;
  /** Who acted (the requester, the clicker, the admin); null for the clock (expiry). */
  actor: UserKey | null;
  approvalId: string | null;
  planId: string | null;
  requester: UserKey;
  /** The plan summary, so the log reads on its own. */
  summary: string;
  /** `hashPlan` of the plan concerned: the same on the message and at execution. */
  planHash?: string;
  /** Outcome status, refusal reason, or other short detail. */
  detail?: string;
}

export interface AuditLog {
  append(entry: AuditEntry): Promise<void>;
  /** The last `limit` entries, oldest first. */
  recent(limit: number): Promise<AuditEntry[]>;
}

export function createAuditLog(store: Store, key = "approvals:audit"): AuditLog {
  return {
    append: async (entry) => {
      await store.append(key, [entry]);
    },
    recent: (limit) => store.range<AuditEntry>(key, -Math.max(1, limit), -1),
  };
}
