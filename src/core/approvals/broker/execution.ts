/**
 * An approved plan's run as the broker records it: marked started just before the executor is
 * called (so a restart can tell whether anything may have run), then its outcome attached.
 */
import { log } from "../../log.js";
import { markStarted } from "../interrupted.js";
import type { ApprovalRecord, Outcome } from "../types.js";
import { auditApproval, type BrokerContext } from "./context.js";
import { loadRecord, recordKey } from "./records.js";

/** Approved, not started, not done → running; atomic against a concurrent `recoverInterrupted`. */
export async function startExecution(ctx: BrokerContext, approvalId: string): Promise<boolean> {
  const started = await markStarted(ctx.store, recordKey(approvalId), ctx.now(), ctx.recordTtlMs);
  if (started) await auditApproval(ctx, "executing", started, null);
  return started !== undefined;
}

/** Attach the outcome, audit it and re-render; the approval's channel is done with after this. */
export async function completeExecution(
  ctx: BrokerContext,
  approvalId: string,
  outcome: Outcome,
): Promise<void> {
  const rec = await loadRecord(ctx.store, approvalId);
  if (!rec) return;
  const next: ApprovalRecord = { ...rec, outcome };
  // The message reference has its own key; the record is stored without it.
  const { messageRef: _ref, ...stored } = next;
  await ctx.store.set(recordKey(approvalId), stored, ctx.recordTtlMs);
  await auditApproval(
    ctx,
    "executed",
    next,
    null,
    `${outcome.status}; tx ${outcome.txIds.join(", ") || "none"}`,
  );
  const channel = ctx.channels.get(approvalId);
  ctx.channels.delete(approvalId);
  await channel?.update(next).catch((err: unknown) => log.warn({ err }, "approval channel update failed"));
}
