/** Errors of the approvals area. Each says what happened and that nothing was executed when true. */

/** The executor could not produce a valid plan (no action, unknown tool, arguments off-schema). */
export class PlanError extends Error {
  readonly code = "PLAN_INVALID";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PlanError";
  }
}

/** A plan id the executor does not hold (never planned, discarded, or already executed). */
export class PlanNotFoundError extends Error {
  readonly code = "PLAN_NOT_FOUND";
  constructor(readonly planId: string) {
    super(`plan ${planId} is unknown, discarded or already executed; nothing was run`);
    this.name = "PlanNotFoundError";
  }
}

/** The executor's copy of a plan is not the plan that was approved: nothing runs. */
export class PlanMismatchError extends Error {
  readonly code = "PLAN_MISMATCH";
  constructor(readonly planId: string) {
    super(`plan ${planId} differs from the plan that was approved; nothing was run`);
    this.name = "PlanMismatchError";
  }
}

/** The approvals store could not be reached: the broker fails closed. */
export class ApprovalStoreError extends Error {
  readonly code = "APPROVAL_STORE_UNAVAILABLE";
  constructor(what: string, options?: { cause?: unknown }) {
    super(`the approvals store is unreachable (${what}); nothing was offered, approved or executed`, options);
    this.name = "ApprovalStoreError";
  }
}

/** The remote executor's pipeline failed, timed out or answered in a shape we do not accept. */
export class RemoteExecutorError extends Error {
  constructor(
    readonly code: "REMOTE_FAILED" | "REMOTE_TIMEOUT" | "REMOTE_MALFORMED" | "REMOTE_HTTP",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "RemoteExecutorError";
  }
}

/** The requester already has as many approvals open as one person may (NEO_MAX_PENDING_APPROVALS). */
export class ApprovalLimitError extends Error {
  readonly code = "APPROVAL_LIMIT";
  constructor(readonly open: number) {
    super(
      `the requester already has ${open} approval${open === 1 ? "" : "s"} waiting for a decision, the most one person may have open at once`,
    );
    this.name = "ApprovalLimitError";
  }
}
