/**
 * The approvals audit log: every request, decision, refusal, expiry and execution, appended to one
 * list in the store (who, what, when, outcome). Append-only; entries older than the retention
 * (`NEO_AUDIT_RETENTION_DAYS`) are dropped from its front once a day.
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

/** The audit list's store key. */
export const AUDIT_KEY = "approvals:audit";
const DAY_MS = 86_400_000;
/** How many entries are read at once while looking for the first one to keep. */
const TRIM_BATCH = 500;

export interface AuditLogOptions {
  /** Entries older than this are dropped (default 365 days). */
  retentionMs?: number;
  now?: () => number;
}

export function createAuditLog(store: Store, opts: AuditLogOptions = {}): AuditLog {
  const retentionMs = opts.retentionMs ?? 365 * DAY_MS;
  const now = opts.now ?? Date.now;
  let trimmedOn = -1;

  /**
   * Once a day (the first append of the day, in one process of all: the claim), drop the entries
   * older than the retention. They were appended in time order, so they are the list's front.
   */
  const trim = async (t: number) => {
    const day = Math.floor(t / DAY_MS);
    if (trimmedOn === day) return;
    trimmedOn = day;
    if (!(await store.setIfAbsent(`${AUDIT_KEY}:trimmed:${day}`, t, 2 * DAY_MS))) return;
    const horizon = t - retentionMs;
    let old = 0;
    for (;;) {
      const batch = await store.range<AuditEntry>(AUDIT_KEY, old, old + TRIM_BATCH - 1);
      const keep = batch.findIndex((e) => e.at >= horizon);
      old += keep === -1 ? batch.length : keep;
      if (keep !== -1 || batch.length < TRIM_BATCH) break;
    }
    await store.dropFirst(AUDIT_KEY, old);
  };

  return {
    append: async (entry) => {
      await store.append(AUDIT_KEY, [entry]);
      await trim(now());
    },
    recent: (limit) => store.range<AuditEntry>(AUDIT_KEY, -Math.max(1, limit), -1),
  };
}
