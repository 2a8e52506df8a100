/**
 * Spend approvals: an executor turns an intent into an exact plan; the requester approves or rejects
 * it with a button; only then does it run. Platform-free; adapters render `ApprovalChannel`.
 */
import type { ConversationKey, Speaker, UserKey } from "../keys.js";

/** What one action would spend. Amounts stay decimal strings: never floats for money. */
export interface Spend {
  amount: string;
  asset: string;
  recipient: string | null;
}

export interface PlannedAction {
  /** The advertised tool name (`alias__name`) the executor will dispatch. */
  tool: string;
  arguments: Record<string, unknown>;
  spend: Spend | null;
}

export interface Plan {
  /** Stable id; the executor can execute exactly this plan by id. */
  id: string;
  intent: string;
  /** One line a person can read before pressing Approve. */
  summary: string;
  actions: PlannedAction[];
  requester: UserKey;
  createdAt: number;
}

export interface ActionResult {
  tool: string;
  /** The tool's result, verbatim. */
  content: string;
  isError: boolean;
}

export interface Outcome {
  status: "success" | "failure" | "partial";
  results: ActionResult[];
  /** Actions that never ran because an earlier one failed. */
  notRun: PlannedAction[];
  /** Transaction ids found in the results, verbatim. */
  txIds: string[];
}

export type Decision = "approve" | "reject";

/**
 * `interrupted`: the process that was to run it died first (found at its restart). From pending,
 * nothing ran; from approved, `executionStartedAt` says whether the executor had been called.
 */
export type ApprovalStatus = "pending" | "approved" | "rejected" | "expired" | "cancelled" | "interrupted";

export interface ApprovalRecord {
  /** Random, unguessable; the only thing a button carries. */
  id: string;
  plan: Plan;
  requester: Speaker;
  conversation: ConversationKey;
  status: ApprovalStatus;
  /** `hashPlan(plan)`: shown on the message, written to every audit entry, checked before execution. */
  planHash: string;
  createdAt: number;
  expiresAt: number;
  /**
   * The instance whose core_execute waits for the decision and runs the plan; at its restart it
   * closes what it left open as interrupted. Absent on records written before it existed.
   */
  instance?: string;
  /** Set (atomically, only while approved) just before the executor is called. */
  executionStartedAt?: number;
  /**
   * Who caused the last decision (clicker, admin, person who reset the thread); none for the clock.
   * An approved record interrupted by a restart keeps its clicker here.
   */
  decidedBy?: UserKey;
  decidedAt?: number;
  /** Why it closed when that is not plain (over the cap at Approve, access withdrawn, interrupted). */
  note?: string;
  outcome?: Outcome;
  /** Platform reference of the message showing the buttons (set by `ApprovalChannel.present`). */
  messageRef?: string;
}

/** Why a click changed nothing; shown to the clicker (ephemerally where the platform allows). */
export type DecisionRefusal =
  | "not_requester"
  | "already_decided"
  | "expired"
  | "unknown"
  | "store_unavailable"
  /** `cancel` called by someone who is not an admin. */
  | "not_admin"
  /** Approve clicked, but the plan no longer fits the requester's spend cap: closed, nothing runs. */
  | "over_cap";

export type DecideResult =
  | { ok: true; record: ApprovalRecord }
  | { ok: false; reason: DecisionRefusal; message: string };

/** Whether a plan can be shown in full on a platform; `reason` says which limit it breaks. */
export type FitCheck = { ok: true } | { ok: false; reason: string };

/** Where approval prompts are shown. Implemented by each adapter for a conversation. */
export interface ApprovalChannel {
  /**
   * Can this record be shown in full, in every state it can reach (pending, decided, with its
   * outcome)? A plan that cannot is refused before it is offered, never shown cut. Absent on a
   * channel without limits (a terminal shows any plan whole).
   */
  fits?(record: ApprovalRecord): FitCheck;
  /** Show the plan with Approve/Reject buttons; returns a reference to that message. */
  present(record: ApprovalRecord): Promise<string | undefined>;
  /** Re-render after a decision, expiry, cancellation or outcome (buttons gone once decided). */
  update(record: ApprovalRecord): Promise<void>;
}
