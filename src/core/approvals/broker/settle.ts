/**
 * The one decision an approval gets. Its token is consumed with `Store.take`, atomic across
 * instances, so concurrent clicks, clicks on other instances and the expiry settle it once; the
 * winner audits and writes the final status, frees the requester's slot and wakes the waiter.
 */
import type { UserKey } from "../../keys.js";
import { recordApprovalDecision } from "../observe.js";
import type { ApprovalRecord, ApprovalStatus } from "../types.js";
import { auditApproval, type BrokerContext } from "./context.js";
import { recordKey, tokenKey } from "./records.js";

/**
 * Runs once the token is ours (so only for the one winner): a reason it returns closes the
 * approval as cancelled with that note instead (Approve over the cap).
 */
export type SettleGate = () => Promise<string | undefined>;

/** Consume the token and write the final status; undefined when someone else settled it first. */
export async function settle(
  ctx: BrokerContext,
  rec: ApprovalRecord,
  wanted: Exclude<ApprovalStatus, "pending">,
  actor: UserKey | null,
  detail?: string,
  gate?: SettleGate,
): Promise<ApprovalRecord | undefined> {
  const token = await ctx.store.take<string>(tokenKey(rec.id));
  if (token === undefined) return undefined;
  const refused = gate ? await gate() : undefined;
  const status = refused === undefined ? wanted : "cancelled";
  const note = refused ?? detail;
  const next: ApprovalRecord = {
    ...rec,
    status,
    decidedAt: ctx.now(),
    ...(actor ? { decidedBy: actor } : {}),
    ...(note === undefined ? {} : { note }),
  };
  // Audit before the status write: if the store fails in between, the record stays pending with
  // its token gone, so it can only expire; nothing runs unaudited.
  await auditApproval(ctx, refused === undefined ? status : "refused_cap", next, actor, note);
  await ctx.store.set(recordKey(rec.id), next, ctx.recordTtlMs);
  await ctx.slots.free(rec);
  recordApprovalDecision({
    conversation: rec.conversation,
    approvalId: rec.id,
    outcome: status,
    decidedBy: actor,
  });
  ctx.decided.emit(rec.id);
  return next;
}
