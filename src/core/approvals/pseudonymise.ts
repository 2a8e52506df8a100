/**
 * An erased person in the approvals: who approved what stays (money law needs it), under a
 * pseudonym. Every approval record and audit entry naming them (as requester, decider or actor)
 * has each of their user keys replaced by `alias`, and their display name on records they requested.
 */
import type { Store } from "../../store/types.js";
import { updateAtomically } from "../../store/update.js";
import { hashTagOf, type UserKey } from "../keys.js";
import { AUDIT_KEY, type AuditEntry } from "./audit.js";
import { recordIds, recordKey } from "./broker/records.js";
import type { ApprovalRecord } from "./types.js";

/** `value` with every string that `isTheirs` replaced by `alias` (objects and arrays copied). */
function replaced<T>(value: T, isTheirs: (s: string) => boolean, alias: string): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return isTheirs(v) ? alias : v;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

/**
 * Pseudonymise one person in every approval record and the audit list; resolves with how many
 * records and entries changed. Records keep the audit retention as their TTL (`recordTtlMs`).
 * The audit list is rewritten by appending the changed copy of its entries and then dropping the
 * originals from its front (no entry is lost to a concurrent append, which lands before the copy).
 */
export async function pseudonymiseApprovals(
  store: Store,
  isTheirs: (key: UserKey) => boolean,
  alias: string,
  recordTtlMs: number,
): Promise<number> {
  let changed = 0;
  for (const id of await recordIds(store)) {
    const { written } = await updateAtomically<ApprovalRecord, null>(
      store,
      recordKey(id),
      (rec) => {
        if (!rec) return { result: null };
        const next = replaced(rec, isTheirs, alias);
        if (isTheirs(rec.requester.userKey)) next.requester = { userKey: alias, displayName: alias };
        return JSON.stringify(next) === JSON.stringify(rec) ? { result: null } : { next, result: null };
      },
      { ttlMs: recordTtlMs },
    );
    if (written) changed++;
  }
  // Their list of open approvals (emptied when they were closed): its key names them.
  for (const k of await store.keys("approvals:open:")) {
    const tag = hashTagOf(k);
    if (tag !== undefined && isTheirs(tag)) await store.delete(k);
  }
  const entries = await store.range<AuditEntry>(AUDIT_KEY, 0, -1);
  const copy = entries.map((e) => replaced(e, isTheirs, alias));
  const touched = copy.filter((e, i) => JSON.stringify(e) !== JSON.stringify(entries[i])).length;
  if (touched > 0) {
    await store.append(AUDIT_KEY, copy);
    await store.dropFirst(AUDIT_KEY, entries.length);
  }
  return changed + touched;
}
