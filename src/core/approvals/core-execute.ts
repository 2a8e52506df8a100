/**
 * `core_execute(intent)`: plan, check access and caps, ask the requester, wait for their click, and
 * only on Approve execute. Returns to the model once settled: the outcome verbatim with its
 * transaction ids, or a plain "rejected by the user" / "expired" / refusal. Nothing the model or a
 * tool result says can approve: only `ApprovalBroker.decide` from the requester's click.
 */
import { inSpan } from "../../ops/tracing/spans.js";
import type { AccessPolicy } from "../access/policy.js";
import { log } from "../log.js";
import type { ToolCallContext, ToolResult, ToolStep } from "../tools/types.js";
import type { ApprovalBroker } from "./broker.js";
import type { SpendCaps } from "./caps.js";
import { ApprovalLimitError, ApprovalStoreError } from "./errors.js";
import type { Executor } from "./executor.js";
import { recordApprovalDecision } from "./observe.js";
import { hashPlan } from "./plan-hash.js";
import { PlanRefusedError } from "./plan-view.js";
import { renderOutcome } from "./render.js";
import type { ApprovalRecord, Outcome, Plan } from "./types.js";

export type CoreExecute = (intent: string, ctx: ToolCallContext) => Promise<ToolResult>;

export interface CoreExecuteOptions {
  executor: Executor;
  broker: ApprovalBroker;
  caps: SpendCaps;
  access: Pick<AccessPolicy, "isAllowed">;
}

const NOTHING = "Nothing was executed.";

function fail(content: string): ToolResult {
  return { content, isError: true };
}

function settledText(rec: ApprovalRecord): string {
  switch (rec.status) {
    case "rejected":
      return `The plan was rejected by the user. ${NOTHING}`;
    case "expired":
      return `The approval expired without a decision. ${NOTHING}`;
    case "cancelled":
      return rec.note
        ? `The approval was closed without running: ${rec.note}. ${NOTHING}`
        : `The approval was cancelled before a decision. ${NOTHING}`;
    default:
      return `The approval ended as ${rec.status}. ${NOTHING}`;
  }
}

/** Told when a turn escalates to `core_execute`: what happens next, and that nothing runs unapproved. */
export const ESCALATION_NOTICE =
  "This needs the approval path: I'm planning the exact actions, and nothing runs until they are approved.";

/** Said to the model for a second `core_execute` in one step: why, and what it can do instead. */
const ONE_PER_STEP =
  "Refused: an earlier core_execute call in this same step already asks the user for approval, and one " +
  `step posts at most one approval prompt. ${NOTHING} Wait for that call's result, then call ` +
  "core_execute again for this intent, or put all the actions in one intent so they are approved together.";

export function createCoreExecute(opts: CoreExecuteOptions): CoreExecute {
  const { executor, broker, caps, access } = opts;
  /** Steps whose approval prompt is taken (by the first core_execute call of the batch). */
  const stepsAsked = new WeakSet<ToolStep>();

  /** A refusal of the limits (open approvals, one per step): audited, told to the model in-band. */
  async function refuseLimit(
    intent: string,
    plan: Plan | null,
    ctx: ToolCallContext,
    reason: string,
  ): Promise<ToolResult> {
    await broker.audit
      .append({
        at: Date.now(),
        event: "refused_limit",
        actor: ctx.speaker.userKey,
        approvalId: null,
        planId: plan?.id ?? null,
        requester: ctx.speaker.userKey,
        summary: plan?.summary ?? intent,
        ...(plan ? { planHash: hashPlan(plan) } : {}),
        detail: reason,
      })
      .catch((err: unknown) => log.warn({ err }, "could not audit a limit refusal"));
    return fail(reason);
  }

  /** A plan that cannot be offered (too big, cannot be shown whole): the user and the model are told why. */
  async function refusePlan(plan: Plan, reason: string, ctx: ToolCallContext): Promise<ToolResult> {
    await broker.audit
      .append({
        at: Date.now(),
        event: "refused_plan",
        actor: ctx.speaker.userKey,
        approvalId: null,
        planId: plan.id,
        requester: ctx.speaker.userKey,
        summary: plan.summary,
        planHash: hashPlan(plan),
        detail: reason,
      })
      .catch((err: unknown) => log.warn({ err }, "could not audit a refused plan"));
    await ctx.reporter
      .notice(
        `I did not ask for approval of a plan of ${plan.actions.length} action(s): ${reason}. ${NOTHING}`,
      )
      .catch((err: unknown) => log.warn({ err }, "could not tell the user about a refused plan"));
    return fail(
      `Refused before approval: ${reason}. ${NOTHING} Split the intent into smaller core_execute calls, ` +
        "each a plan that can be shown in full.",
    );
  }

  return async (intent, ctx) => {
    const who = ctx.speaker;
    // Claimed before any await, so of a batch's concurrent calls exactly one gets the step's prompt.
    if (stepsAsked.has(ctx.step)) return refuseLimit(intent, null, ctx, ONE_PER_STEP);
    stepsAsked.add(ctx.step);
    try {
      if (!(await access.isAllowed(who.userKey))) {
        return fail(`core_execute refused: ${who.displayName} is not allowed to use Neo. ${NOTHING}`);
      }
    } catch (err) {
      log.error({ err }, "access check failed; refusing core_execute");
      return fail(`core_execute refused: the access list cannot be read right now. ${NOTHING}`);
    }

    // Rung 3 of the ladder: a deliberate, visible promise (a Notice), not passing progress.
    await ctx.reporter.notice(ESCALATION_NOTICE);
    let plan: Plan;
    try {
      plan = await executor.plan(intent, who, ctx);
    } catch (err) {
      return fail(`Could not plan this: ${err instanceof Error ? err.message : String(err)}. ${NOTHING}`);
    }

    const discard = () =>
      executor.discard(plan.id).catch((err: unknown) => log.warn({ err, planId: plan.id }, "discard failed"));
    let record: ApprovalRecord;
    try {
      const cap = await caps.check(who.userKey, plan);
      if (!cap.ok) {
        recordApprovalDecision({
          conversation: ctx.conversation,
          approvalId: null,
          outcome: "refused_cap",
          decidedBy: null,
        });
        await broker.audit
          .append({
            at: Date.now(),
            event: "refused_cap",
            actor: who.userKey,
            approvalId: null,
            planId: plan.id,
            requester: who.userKey,
            summary: plan.summary,
            detail: cap.reason,
          })
          .catch((err: unknown) => log.warn({ err }, "could not audit a cap refusal"));
        await discard();
        return fail(`Refused before approval: ${cap.reason}. ${NOTHING}`);
      }
      record = await broker.request(plan, who, ctx.conversation, ctx.approvals);
    } catch (err) {
      await discard();
      if (err instanceof PlanRefusedError) return refusePlan(plan, err.message, ctx);
      if (err instanceof ApprovalLimitError)
        return refuseLimit(
          intent,
          plan,
          ctx,
          `Refused before approval: ${who.displayName} already has ${err.open} approval(s) waiting for a ` +
            `decision, the most one person may have open at once. ${NOTHING} Tell the user; once one of ` +
            "them is approved, rejected or expired, call core_execute again.",
        );
      const why =
        err instanceof ApprovalStoreError ? err.message : `could not ask for approval: ${String(err)}`;
      return fail(`${why}. ${NOTHING}`);
    }

    await ctx.reporter.status(`Waiting for ${who.displayName} to approve: ${plan.summary}`);
    let settled: ApprovalRecord;
    try {
      // The wait for the person is its own span: in a slow turn it is often most of the time.
      settled = await inSpan(
        "neo.approval",
        { attributes: { "neo.approval.actions": plan.actions.length } },
        async (span) => {
          const decided = await broker.waitForDecision(record.id, ctx.signal);
          span.setAttribute("neo.approval.outcome", decided.status);
          return decided;
        },
      );
    } catch (err) {
      await discard();
      return fail(`${err instanceof Error ? err.message : String(err)}. ${NOTHING}`);
    }
    if (settled.status !== "approved") {
      await discard();
      return { content: settledText(settled), isError: false };
    }

    // Approve reserved the plan's amounts under the cap; what does not run is released below.
    const release = () =>
      caps
        .settle(who.userKey, record.id, null)
        .catch((err: unknown) => log.error({ err }, "could not release a cap reservation"));
    const notRun = async (why: string): Promise<ToolResult> => {
      const nothing: Outcome = { status: "failure", results: [], notRun: plan.actions, txIds: [] };
      await release();
      await broker
        .complete(record.id, nothing)
        .catch((e: unknown) => log.error({ err: e }, "could not record outcome"));
      return fail(`Approved, but ${why}. ${NOTHING}`);
    };
    // Access again at the last moment: an admin may have denied the requester since the click.
    const stillAllowed = await access.isAllowed(who.userKey).catch(() => false);
    if (!stillAllowed)
      return notRun(`${who.displayName} may no longer use Neo (or the access list is unreadable)`);
    // Recorded before the executor is called, so a restart can tell "nothing ran" from "unknown".
    let started: boolean;
    try {
      started = await broker.startExecution(record.id);
    } catch (err) {
      return notRun(`its start could not be recorded (${err instanceof Error ? err.message : String(err)})`);
    }
    if (!started) {
      // Closed as interrupted by this instance's restart recovery; that released the cap already.
      await discard();
      return fail(`Approved, but the approval was closed as interrupted before it ran. ${NOTHING}`);
    }
    await ctx.reporter.status(`Executing: ${plan.summary}`);
    let outcome: Outcome;
    try {
      outcome = await executor.execute(plan, ctx);
    } catch (err) {
      return notRun(`execution could not start: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Count what actually ran: actions are run in order, so the successes are a prefix.
    const ran = outcome.results.filter((r) => !r.isError).length;
    await caps
      .settle(who.userKey, record.id, ran > 0 ? { ...plan, actions: plan.actions.slice(0, ran) } : null)
      .catch((err: unknown) => log.error({ err }, "could not count spend"));
    await broker
      .complete(record.id, outcome)
      .catch((err: unknown) => log.error({ err }, "could not record outcome"));
    return { content: renderOutcome(outcome), isError: outcome.status !== "success" };
  };
}
