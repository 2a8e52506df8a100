/**
 * Waiting for an approval's decision. The waiter reads the store until the approval is settled
 * (here, woken at once, or on another instance, seen at the next poll), settles it itself as
 * expired at its expiry or cancelled when the turn is stopped, and re-renders it.
 */
import { log } from "../../log.js";
import { ApprovalStoreError } from "../errors.js";
import type { ApprovalRecord } from "../types.js";
import type { BrokerContext } from "./context.js";
import { loadRecord } from "./records.js";
import { settle } from "./settle.js";

/** Resolves with the settled record: approved, rejected, expired or cancelled (also on abort). */
export async function waitForDecision(
  ctx: BrokerContext,
  approvalId: string,
  signal?: AbortSignal,
): Promise<ApprovalRecord> {
  let last: ApprovalRecord | undefined;
  for (;;) {
    const rec = await loadRecord(ctx.store, approvalId).catch((err: unknown) => {
      log.warn({ err, approvalId }, "approval poll failed; retrying until expiry");
      return last;
    });
    if (!rec) throw new ApprovalStoreError(`approval ${approvalId} vanished while waiting`);
    last = rec;
    if (rec.status !== "pending") return showSettled(ctx, rec);
    if (signal?.aborted) {
      // The turn was stopped; who stopped it is not known here, so no one is named as deciding.
      const settled = await settle(ctx, rec, "cancelled", null, "the turn was cancelled").catch(
        () => undefined,
      );
      if (settled) return showSettled(ctx, settled);
    } else if (ctx.now() >= rec.expiresAt) {
      const settled = await settle(ctx, rec, "expired", null).catch(() => undefined);
      if (settled) return showSettled(ctx, settled);
      // Someone settled it a moment before us, or the store is down: give the winner a few polls
      // to write its status, then treat it as expired (nothing executes from here).
      if (ctx.now() >= rec.expiresAt + ctx.pollMs * 10)
        return showSettled(ctx, { ...rec, status: "expired" });
    }
    await wake(ctx, approvalId, Math.min(ctx.pollMs, Math.max(1, rec.expiresAt - ctx.now())), signal);
  }
}

/**
 * Re-render a settled record on the channel showing it. An approved one keeps its channel, for the
 * outcome that follows; any other is done with it.
 */
export async function showSettled(ctx: BrokerContext, rec: ApprovalRecord): Promise<ApprovalRecord> {
  const channel = ctx.channels.get(rec.id);
  if (rec.status !== "approved") ctx.channels.delete(rec.id);
  await channel?.update(rec).catch((err: unknown) => log.warn({ err }, "approval channel update failed"));
  return rec;
}

/** After `ms`, when this process settles `id`, or on abort, whichever comes first. */
function wake(ctx: BrokerContext, id: string, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      ctx.decided.off(id, done);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    ctx.decided.once(id, done);
    signal?.addEventListener("abort", done, { once: true });
  });
}
