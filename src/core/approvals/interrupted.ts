/**
 * The two record transitions that make a crash between click and execution honest, each one atomic
 * on the stored record (`updateAtomically`), so they exclude each other: an approved record is either
 * marked started (then the executor is called) or closed as interrupted (then it never runs).
 */
import type { Store } from "../../store/types.js";
import { updateAtomically } from "../../store/update.js";
import type { ApprovalRecord } from "./types.js";

/** What an interrupted approval's message says. */
export const INTERRUPTED_NOTES = {
  pending:
    "Neo restarted while this waited for a decision; nothing was executed. Ask again if you still want it",
  approved:
    "Neo restarted after the approval and before running it; nothing was executed. Ask again if you still want it",
  started:
    "Neo restarted while this was running; some actions may have run. Check balances and transactions before retrying",
} as const;

/** Approved, not started, no outcome → started at `at`. The updated record, or undefined if not. */
export async function markStarted(
  store: Store,
  key: string,
  at: number,
  ttlMs: number,
): Promise<ApprovalRecord | undefined> {
  const { value, result } = await updateAtomically<ApprovalRecord, boolean>(
    store,
    key,
    (cur) =>
      cur?.status === "approved" && cur.executionStartedAt === undefined && !cur.outcome
        ? { next: { ...cur, executionStartedAt: at }, result: true }
        : { result: false },
    { ttlMs },
  );
  return result ? value : undefined;
}

/**
 * Approved with no outcome → interrupted, with the note saying whether it had started. decidedBy
 * and decidedAt stay the click's, so the message keeps naming who approved.
 */
export async function markInterrupted(
  store: Store,
  key: string,
  ttlMs: number,
): Promise<ApprovalRecord | undefined> {
  const { value, result } = await updateAtomically<ApprovalRecord, boolean>(
    store,
    key,
    (cur) => {
      if (cur?.status !== "approved" || cur.outcome) return { result: false };
      const note =
        cur.executionStartedAt === undefined ? INTERRUPTED_NOTES.approved : INTERRUPTED_NOTES.started;
      return { next: { ...cur, status: "interrupted", note }, result: true };
    },
    { ttlMs },
  );
  return result ? value : undefined;
}
