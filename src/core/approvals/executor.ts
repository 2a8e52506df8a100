/**
 * The two sides an executor sees: the executor contract (plan an intent, execute an approved plan)
 * and the privileged tool access the embedded executor plans and executes with. Apart from
 * `types.ts` because both need the tool-call context, which itself carries an `ApprovalChannel`.
 */
import type { Speaker } from "../keys.js";
import type { ToolSchema } from "../llm/types.js";
import type { ToolCallContext, ToolResult } from "../tools/types.js";
import type { Outcome, Plan } from "./types.js";

/** Turns intents into plans and runs approved plans. Embedded (MCP) or remote (HTTP). */
export interface Executor {
  readonly kind: "embedded" | "remote";
  plan(intent: string, requester: Speaker, ctx: ToolCallContext): Promise<Plan>;
  /**
   * Run exactly `plan`, the one the requester approved: an executor whose own copy differs (by
   * `hashPlan`) refuses and runs nothing.
   */
  execute(plan: Plan, ctx: ToolCallContext): Promise<Outcome>;
  /** Tell the executor the plan will never run (rejected, expired, cancelled). */
  discard(planId: string): Promise<void>;
}

/**
 * The privileged side of the tool surface the embedded executor plans and executes with: the
 * Escalate-class tools that are never advertised to the loop. Only executors hold this.
 */
export interface EscalateTools {
  /** Escalate-class tools, as `alias__name` schemas with their real JSON schemas. */
  escalateSchemas(): ToolSchema[];
  /** Dispatch one Escalate-class tool (the privileged path). Same result semantics as `dispatch`. */
  dispatchPrivileged(name: string, args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolResult>;
}
