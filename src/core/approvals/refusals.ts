/** What a click that changed nothing tells the clicker. One sentence each, no internals. */
import type { ApprovalRecord, DecisionRefusal } from "./types.js";

export function refusal(reason: DecisionRefusal, rec: ApprovalRecord | undefined): string {
  switch (reason) {
    case "not_requester":
      return `Only ${rec?.requester.displayName ?? "the person who asked"} can approve or reject this plan.`;
    case "already_decided":
      return `This approval was already ${rec?.status === "pending" ? "decided" : (rec?.status ?? "decided")}; nothing changed.`;
    case "expired":
      return "This approval has expired; nothing was executed. Ask again if you still want it.";
    case "unknown":
      return "This approval is unknown (it may be from an old deployment); nothing was executed.";
    case "store_unavailable":
      return "Approvals are unavailable right now (the store cannot be reached); nothing was approved or executed.";
    case "not_admin":
      return "Only an admin can cancel approvals.";
    case "over_cap":
      return `Not approved: ${rec?.note ?? "the plan is over the spend cap"}. Nothing was executed.`;
  }
}
