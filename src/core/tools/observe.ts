/**
 * Every tool call the surface dispatches, as operators see it: `neo_tool_calls_total{tool,outcome}`
 * and one info line (conversation, tool, outcome, duration, argument names). Argument values never
 * reach the log: they may hold addresses, amounts or secrets.
 */

import { metrics } from "../../ops/metrics.js";
import { log, logSoon } from "../log.js";
import type { ToolCallContext, ToolResult } from "./types.js";

const toolLog = log.child({ component: "tools" });

/** The metric label for names the surface does not know: the model may invent any name. */
export const UNKNOWN_TOOL_LABEL = "unknown";

export type ToolOutcome = "ok" | "error" | "transport_error";

export interface ObservedCall {
  /** The advertised name, or `UNKNOWN_TOOL_LABEL` when the surface has no such tool. */
  label: string;
  args: Record<string, unknown>;
  ctx: ToolCallContext;
  /** The executor's post-approval path (`dispatchPrivileged`). */
  privileged?: boolean;
}

/**
 * Run `call`, then count and log it; rethrows whatever `call` throws (counted as transport_error).
 * Both happen just after the caller has the result (`logSoon`): they are bookkeeping, not its path.
 */
export async function observeToolCall(o: ObservedCall, call: () => Promise<ToolResult>): Promise<ToolResult> {
  const started = Date.now();
  let outcome: ToolOutcome = "transport_error";
  try {
    const result = await call();
    outcome = result.isError ? "error" : "ok";
    return result;
  } finally {
    const tool = o.label;
    const line = toolLog.isLevelEnabled("info")
      ? {
          conversation: o.ctx.conversation,
          tool,
          outcome,
          ms: Date.now() - started,
          argNames: Object.keys(o.args),
          ...(o.privileged ? { privileged: true } : {}),
        }
      : undefined;
    logSoon(() => {
      metrics.toolCalls.inc({ tool, outcome });
      if (line) toolLog.info(line, "tool call");
    });
  }
}
