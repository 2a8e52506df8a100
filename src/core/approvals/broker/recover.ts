/**
 * Start-up recovery: every approval this instance left open when it died is closed as interrupted
 * (or expired, if its time ran out) and re-rendered, before any click is taken. Nothing it closes
 * runs afterwards; whether anything may have run is said on the message.
 */
import type { ConversationKey } from "../../keys.js";
import { log } from "../../log.js";
import { INTERRUPTED_NOTES, markInterrupted } from "../interrupted.js";
import { recordApprovalDecision } from "../observe.js";
import type { ApprovalChannel, ApprovalRecord } from "../types.js";
import { auditApproval, type BrokerContext } from "./context.js";
import { loadRecord, recordIds, recordKey } from "./records.js";
import { settle } from "./settle.js";

/** Close what this instance left open, re-rendered through `channelFor`; how many were closed. */
export async function recoverInterrupted(
  ctx: BrokerContext,
  channelFor: (conversation: ConversationKey) => ApprovalChannel | undefined,
): Promise<number> {
  let closed = 0;
  for (const id of await recordIds(ctx.store)) {
    const rec = await loadRecord(ctx.store, id);
    if (!rec || rec.instance !== ctx.instanceId) continue;
    const done = await interrupt(ctx, rec);
    if (!done) continue;
    closed++;
    log.info(
      { approvalId: rec.id, status: done.status, note: done.note },
      "approval left open by a restart closed",
    );
    const shown = rec.messageRef === undefined ? done : { ...done, messageRef: rec.messageRef };
    await channelFor(rec.conversation)
      ?.update(shown)
      .catch((err: unknown) =>
        log.warn({ err, approvalId: rec.id }, "could not re-render an interrupted approval"),
      );
  }
  return closed;
}

/** Close one approval this instance left open; the closed record, or undefined if it was not open. */
async function interrupt(ctx: BrokerContext, rec: ApprovalRecord): Promise<ApprovalRecord | undefined> {
  if (rec.status === "pending") {
    const expired = ctx.now() >= rec.expiresAt;
    return settle(
      ctx,
      rec,
      expired ? "expired" : "interrupted",
      null,
      expired ? undefined : INTERRUPTED_NOTES.pending,
    );
  }
  if (rec.status !== "approved" || rec.outcome) return undefined;
  const value = await markInterrupted(ctx.store, recordKey(rec.id), ctx.recordTtlMs);
  if (!value) return undefined;
  await auditApproval(
    ctx,
    "interrupted",
    value,
    null,
    `approved by ${value.decidedBy ?? "unknown"}; ${value.note}`,
  );
  // Nothing ran: the cap reservation is released. Maybe something ran: it stays (fail closed).
  if (value.executionStartedAt === undefined) await ctx.caps?.settle(value.requester.userKey, value.id, null);
  recordApprovalDecision({
    conversation: value.conversation,
    approvalId: value.id,
    outcome: "interrupted",
    decidedBy: value.decidedBy ?? null,
  });
  return value;
}
