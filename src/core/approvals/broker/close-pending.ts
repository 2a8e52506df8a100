/**
 * The open approvals: listed for admins, and closed together when their requester loses access or
 * their conversation is reset.
 */
import type { UserKey } from "../../keys.js";
import type { ApprovalRecord } from "../types.js";
import type { BrokerContext } from "./context.js";
import { loadRecord, recordIds } from "./records.js";
import { settle } from "./settle.js";
import { showSettled } from "./wait.js";

/** Pending, unexpired approvals, oldest first. */
export async function listPending(ctx: BrokerContext): Promise<ApprovalRecord[]> {
  const ids = await recordIds(ctx.store);
  const recs = await Promise.all(ids.map((id) => loadRecord(ctx.store, id)));
  const t = ctx.now();
  return recs
    .filter((r): r is ApprovalRecord => r !== undefined && r.status === "pending" && r.expiresAt > t)
    .sort((a, b) => a.createdAt - b.createdAt);
}

/** Settle the matching pending approvals as cancelled by `by`; how many were closed. */
export async function closePending(
  ctx: BrokerContext,
  match: (r: ApprovalRecord) => boolean,
  by: UserKey,
  note: string,
): Promise<number> {
  let closed = 0;
  for (const rec of (await listPending(ctx)).filter(match)) {
    // A waiting core_execute re-renders its own message when woken; without one, render here.
    const waited = ctx.decided.listenerCount(rec.id) > 0;
    const done = await settle(ctx, rec, "cancelled", by, note);
    if (done) {
      closed++;
      if (!waited) await showSettled(ctx, done);
    }
  }
  return closed;
}
