/** Plain-text renderings of plans and outcomes, shared by core_execute and the adapters. */
import { actionArguments, recipientTotals } from "./plan-view.js";
import { describeSpend } from "./spend.js";
import type { ApprovalRecord, Outcome, Plan } from "./types.js";

/** The whole plan as a terminal shows it: intent, every action with all its arguments, totals. */
export function renderPlan(plan: Plan): string {
  const lines = plan.actions.map((a, i) => {
    const spend = a.spend ? ` (spends ${describeSpend(a.spend)})` : "";
    return `${i + 1}. ${a.tool} ${actionArguments(a)}${spend}`;
  });
  const totals = recipientTotals(plan).map((t) => `  ${t.recipient}: ${t.amount} ${t.asset}`);
  return [
    `Intent: ${plan.intent}`,
    ...lines,
    ...(totals.length ? ["Totals per recipient:", ...totals] : []),
  ].join("\n");
}

/** The outcome for the model: status, tx ids, then every result verbatim, and what did not run. */
export function renderOutcome(outcome: Outcome): string {
  const lines = [
    `Approved by the user and executed. Status: ${outcome.status}.`,
    `Transaction ids: ${outcome.txIds.length > 0 ? outcome.txIds.join(", ") : "none reported"}`,
    ...outcome.results.map((r, i) => `[${i + 1}] ${r.tool}${r.isError ? " (FAILED)" : ""}: ${r.content}`),
  ];
  if (outcome.notRun.length > 0) {
    lines.push(`Not run (an earlier action failed): ${outcome.notRun.map((a) => a.tool).join(", ")}`);
  }
  return lines.join("\n");
}

/** One line for an approval's state after a decision (for re-rendering an approval message). */
export function renderStatus(rec: ApprovalRecord): string {
  const who = rec.decidedBy ?? "nobody";
  switch (rec.status) {
    case "pending":
      return `Waiting for ${rec.requester.displayName} to approve.`;
    case "approved":
      return rec.outcome
        ? `Approved by ${who}; executed: ${rec.outcome.status}` +
            (rec.outcome.txIds.length > 0 ? ` (tx ${rec.outcome.txIds.join(", ")})` : "")
        : `Approved by ${who}; executing.`;
    case "rejected":
      return `Rejected by ${who}; nothing was executed.`;
    case "expired":
      return "Expired without a decision; nothing was executed.";
    case "cancelled":
      return `Closed${rec.decidedBy ? ` by ${rec.decidedBy}` : ""}${rec.note ? `: ${rec.note}` : ""}; nothing was executed.`;
    case "interrupted":
      return `${rec.decidedBy ? `Approved by ${rec.decidedBy}, then interrupted` : "Interrupted"}: ${rec.note ?? "Neo restarted"}.`;
  }
}
