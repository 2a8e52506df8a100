/**
 * Offering an approval: the plan is checked (small enough, shown whole on this channel), the
 * requester's open slot taken, the record and its one-time token written and read back, then the
 * plan presented. Any failure before the message exists leaves nothing offered.
 */
import { randomBytes } from "node:crypto";
import type { ConversationKey, Speaker } from "../../keys.js";
import { ApprovalLimitError, ApprovalStoreError } from "../errors.js";
import { recordApprovalRequested } from "../observe.js";
import { hashPlan } from "../plan-hash.js";
import { PlanRefusedError, planSizeProblem } from "../plan-view.js";
import type { ApprovalChannel, ApprovalRecord, Plan } from "../types.js";
import { auditApproval, type BrokerContext } from "./context.js";
import { assertHealthy, recordKey, refKey, TOKEN_GRACE_MS, tokenKey } from "./records.js";
import { settle } from "./settle.js";

/** A fresh approval id: 128 random bits, URL-safe, fits any button payload. */
export function newApprovalId(): string {
  return `apv_${randomBytes(16).toString("base64url")}`;
}

/** Persist a pending approval for `requester` and present it on `channel`; see `ApprovalBroker.request`. */
export async function offerApproval(
  ctx: BrokerContext,
  plan: Plan,
  requester: Speaker,
  conversation: ConversationKey,
  channel: ApprovalChannel,
): Promise<ApprovalRecord> {
  const { store } = ctx;
  const tooBig = planSizeProblem(plan);
  if (tooBig) throw new PlanRefusedError(tooBig);
  assertHealthy(store, "offering an approval");
  const createdAt = ctx.now();
  const rec: ApprovalRecord = {
    id: newApprovalId(),
    plan,
    requester,
    conversation,
    status: "pending",
    planHash: hashPlan(plan),
    createdAt,
    expiresAt: createdAt + ctx.ttlMs,
    instance: ctx.instanceId,
  };
  // Shown in full or not offered: a plan the platform cannot show whole is refused, never cut.
  const fit = channel.fits?.(rec) ?? { ok: true };
  if (!fit.ok) throw new PlanRefusedError(fit.reason);
  try {
    await ctx.slots.take(rec);
  } catch (err) {
    if (err instanceof ApprovalLimitError) throw err;
    throw new ApprovalStoreError("offering an approval", { cause: err });
  }
  try {
    await store.set(recordKey(rec.id), rec, ctx.recordTtlMs);
    await store.set(tokenKey(rec.id), rec.id, ctx.ttlMs + TOKEN_GRACE_MS);
    // keyv-style stores can drop writes silently while the server is away: read back to be sure.
    if ((await store.get<string>(tokenKey(rec.id))) !== rec.id) throw new Error("write not readable");
    await auditApproval(ctx, "requested", rec, requester.userKey);
  } catch (err) {
    await store.take(tokenKey(rec.id)).catch(() => undefined);
    await ctx.slots.free(rec);
    throw new ApprovalStoreError("offering an approval", { cause: err });
  }
  recordApprovalRequested(conversation, rec.id);
  ctx.channels.set(rec.id, channel);
  let ref: string | undefined;
  try {
    ref = await channel.present(rec);
  } catch (err) {
    ctx.channels.delete(rec.id);
    await settle(ctx, rec, "cancelled", null, "could not be shown").catch(() => undefined);
    throw err;
  }
  if (ref !== undefined) await store.set(refKey(rec.id), ref, ctx.recordTtlMs);
  return ref === undefined ? rec : { ...rec, messageRef: ref };
}
