/**
 * The embedded executor: the main model plans over the Escalate-class tools only; every planned call
 * is validated against its tool's JSON schema before a plan exists; an approved plan is dispatched
 * through the privileged tool path in order, stopping at the first failure.
 */

import type { Store } from "../../store/types.js";
import type { Speaker } from "../keys.js";
import type { AssistantMessage, LlmClient, Message, ToolCall, ToolSchema } from "../llm/types.js";
import type { ToolCallContext } from "../tools/types.js";
import { DecimalError } from "./decimal.js";
import { PlanError, PlanMismatchError, PlanNotFoundError } from "./errors.js";
import type { EscalateTools, Executor } from "./executor.js";
import { validateJsonSchema } from "./json-schema.js";
import { hashPlan } from "./plan-hash.js";
import { createPlanStore, newPlanId } from "./plan-store.js";
import { runActions } from "./run-actions.js";
import { describeSpend, extractSpend, type SpendRules } from "./spend.js";
import type { Outcome, Plan, PlannedAction } from "./types.js";

export interface EmbeddedExecutorOptions {
  llm: LlmClient;
  tools: EscalateTools;
  store: Store;
  /** Declared spend rules per tool (`NEO_SPEND_RULES`). */
  spendRules?: SpendRules;
  /** Planning attempts; an off-schema plan is shown its errors and tried again. Default 2. */
  maxAttempts?: number;
}

const PLANNER_SYSTEM = [
  "You are Neo's execution planner. Turn the user's intent into the exact tool calls that carry it out,",
  "using only the tools provided. Call every tool needed, in the order they must run, in ONE response.",
  "Use exact values from the intent (amounts, assets, addresses); never invent a value that is not given.",
  "If the intent cannot be done with these tools, answer in one sentence why, with no tool call.",
  "Nothing you produce runs until the user approves it.",
].join(" ");

type Checked = { ok: true; actions: PlannedAction[] } | { ok: false; errors: Map<string, string> };

function checkCalls(calls: ToolCall[], schemas: Map<string, ToolSchema>, rules: SpendRules): Checked {
  const errors = new Map<string, string>();
  const actions: PlannedAction[] = [];
  for (const call of calls) {
    const name = call.function.name;
    const schema = schemas.get(name);
    if (!schema) {
      errors.set(call.id, `"${name}" is not one of the available tools`);
      continue;
    }
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments || "{}");
    } catch {
      errors.set(call.id, `arguments of ${name} are not valid JSON`);
      continue;
    }
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      errors.set(call.id, `arguments of ${name} must be a JSON object`);
      continue;
    }
    const problems = validateJsonSchema(schema.function.parameters, args);
    if (problems.length > 0) {
      errors.set(call.id, `arguments of ${name} do not match its schema: ${problems.join("; ")}`);
      continue;
    }
    try {
      const record = args as Record<string, unknown>;
      actions.push({ tool: name, arguments: record, spend: extractSpend(record, rules[name]) });
    } catch (err) {
      if (!(err instanceof DecimalError)) throw err;
      errors.set(call.id, `${name}: ${err.message}`);
    }
  }
  return errors.size === 0 ? { ok: true, actions } : { ok: false, errors };
}

/** "wallet__transfer 5 USDC to 0xabc; wallet__swap 1 ETH" */
export function summarise(actions: readonly PlannedAction[]): string {
  return actions.map((a) => (a.spend ? `${a.tool} ${describeSpend(a.spend)}` : a.tool)).join("; ");
}

export function createEmbeddedExecutor(opts: EmbeddedExecutorOptions): Executor {
  const plans = createPlanStore(opts.store);
  const maxAttempts = opts.maxAttempts ?? 2;

  async function plan(intent: string, requester: Speaker, ctx: ToolCallContext): Promise<Plan> {
    const tools = opts.tools.escalateSchemas();
    if (tools.length === 0)
      throw new PlanError("no money-moving tools are configured; nothing can be planned");
    const schemas = new Map(tools.map((t) => [t.function.name, t]));
    const messages: Message[] = [{ role: "user", content: intent }];
    let lastErrors = "";
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const completion = await opts.llm.complete({
        role: "main",
        system: PLANNER_SYSTEM,
        messages,
        tools,
        signal: ctx.signal,
        tags: { purpose: "plan", conversation: ctx.conversation, user: requester.userKey },
      });
      if (completion.toolCalls.length === 0) {
        const why = completion.content?.trim() || "the planner proposed no action";
        throw new PlanError(`no plan: ${why}`);
      }
      const checked = checkCalls(completion.toolCalls, schemas, opts.spendRules ?? {});
      if (checked.ok) {
        const planned: Plan = {
          id: newPlanId(),
          intent,
          summary: summarise(checked.actions),
          actions: checked.actions,
          requester: requester.userKey,
          createdAt: Date.now(),
        };
        await plans.save(planned);
        return planned;
      }
      lastErrors = [...checked.errors.values()].join("; ");
      // Show the planner exactly what was wrong and let it correct the calls once more.
      const assistant: AssistantMessage = {
        role: "assistant",
        content: completion.content,
        tool_calls: completion.toolCalls,
      };
      messages.push(assistant);
      for (const call of completion.toolCalls) {
        const error = checked.errors.get(call.id);
        messages.push({
          role: "tool",
          tool_call_id: call.id,
          content: error ? `INVALID: ${error}` : "ok (not executed: planning only)",
        });
      }
      messages.push({ role: "user", content: "Correct the invalid calls and propose the full plan again." });
    }
    throw new PlanError(`the planned calls were invalid: ${lastErrors}`);
  }

  async function execute(approved: Plan, ctx: ToolCallContext): Promise<Outcome> {
    const stored = await plans.load(approved.id);
    if (!stored) throw new PlanNotFoundError(approved.id);
    // The stored copy is what runs; it must be, byte for byte, the plan the requester was shown.
    if (hashPlan(stored) !== hashPlan(approved)) throw new PlanMismatchError(approved.id);
    if (!(await plans.claimExecution(approved.id))) throw new PlanNotFoundError(approved.id);
    return runActions(stored.actions, (a) => opts.tools.dispatchPrivileged(a.tool, a.arguments, ctx));
  }

  return { kind: "embedded", plan, execute, discard: (planId) => plans.discard(planId) };
}
