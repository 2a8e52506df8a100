/**
 * Clicks: the requester's Approve or Reject, and an admin's cancel. Each is checked (who clicked,
 * still pending, not expired) and then settled once; Approve reserves the plan's amounts under the
 * spend cap as it settles. A click that changes nothing is audited and told why. Fails closed.
 */
import type { UserKey } from "../../keys.js";
import { log } from "../../log.js";
import { refusal } from "../refusals.js";
import type { ApprovalRecord, DecideResult, DecisionRefusal } from "../types.js";
import { auditApproval, type BrokerContext } from "./context.js";
import { assertHealthy, loadRecord } from "./records.js";
import { type SettleGate, settle } from "./settle.js";

/** Settle `approvalId` as `status` for `clicker`, if `allowed` lets them and it is still open. */
export async function decide(
  ctx: BrokerContext,
  approvalId: string,
  clicker: UserKey,
  status: "approved" | "rejected" | "cancelled",
  allowed: (rec: ApprovalRecord) => boolean,
): Promise<DecideResult> {
  try {
    assertHealthy(ctx.store, "deciding");
    const rec = await loadRecord(ctx.store, approvalId);
    if (!rec) {
      assertHealthy(ctx.store, "deciding");
      return refuse(ctx, undefined, clicker, "unknown");
    }
    if (!allowed(rec))
      return refuse(ctx, rec, clicker, status === "cancelled" ? "not_admin" : "not_requester");
    if (rec.status === "expired") return refuse(ctx, rec, clicker, "expired");
    if (rec.status !== "pending") return refuse(ctx, rec, clicker, "already_decided");
    if (ctx.now() >= rec.expiresAt) {
      await settle(ctx, rec, "expired", null, "expired before the click");
      return refuse(ctx, rec, clicker, "expired");
    }
    const next = await settle(
      ctx,
      rec,
      status,
      clicker,
      undefined,
      status === "approved" ? reserve(ctx, rec) : undefined,
    );
    if (!next) {
      assertHealthy(ctx.store, "deciding");
      return refuse(ctx, rec, clicker, "already_decided");
    }
    if (next.status !== status) return { ok: false, reason: "over_cap", message: refusal("over_cap", next) };
    return { ok: true, record: next };
  } catch (err) {
    log.error({ err, approvalId }, "approval decision failed: store unavailable");
    return { ok: false, reason: "store_unavailable", message: refusal("store_unavailable", undefined) };
  }
}

async function refuse(
  ctx: BrokerContext,
  rec: ApprovalRecord | undefined,
  clicker: UserKey,
  reason: DecisionRefusal,
): Promise<DecideResult> {
  if (rec) {
    await auditApproval(ctx, "refused_click", rec, clicker, reason).catch((err: unknown) => {
      log.warn({ err, approvalId: rec.id }, "could not audit a refused click");
    });
  }
  return { ok: false, reason, message: refusal(reason, rec) };
}

/** The cap reservation Approve makes, as a settle gate: a refusal reason, or none when reserved. */
function reserve(ctx: BrokerContext, rec: ApprovalRecord): SettleGate | undefined {
  const caps = ctx.caps;
  if (!caps) return undefined;
  return async () => {
    const r = await caps.reserve(rec.requester.userKey, rec.id, rec.plan);
    return r.ok ? undefined : r.reason;
  };
}
