/**
 * One batch of tool calls: arguments parsed (malformed JSON becomes an in-band error the model
 * sees), a Status line per call, dispatch through the ladder. Calls of a batch run concurrently;
 * results come back in call order. The calls of a batch are one step (`ToolStep`).
 */
import { z } from "zod";
import { activeSpan, inSpan, traceContent } from "../../ops/tracing/spans.js";
import type { ToolCall } from "../llm/types.js";
import type { ToolCallContext, ToolResult, ToolSurface } from "../tools/types.js";
import { renderToolCall } from "./display.js";
import { CancelledError, dispatchWithRetry, type LadderOptions } from "./ladder.js";

const argsSchema = z.record(z.string(), z.unknown());

export type ParsedArgs = { ok: true; args: Record<string, unknown> } | { ok: false; error: string };

/** Tool arguments as the model sent them; an empty string means no arguments. */
export function parseToolArgs(raw: string): ParsedArgs {
  if (raw.trim() === "") return { ok: true, args: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    return { ok: false, error: `arguments are not valid JSON (${(e as Error).message})` };
  }
  const parsed = argsSchema.safeParse(value);
  return parsed.success
    ? { ok: true, args: parsed.data }
    : { ok: false, error: "arguments must be a JSON object" };
}

/** Rejects with `CancelledError` the moment `signal` aborts, whatever `work` is doing. */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new CancelledError("cancelled"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new CancelledError("cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

export interface CallOutcome {
  call: ToolCall;
  result: ToolResult;
}

async function runOne(
  call: ToolCall,
  tools: ToolSurface,
  ctx: ToolCallContext,
  ladder: LadderOptions,
): Promise<CallOutcome> {
  const parsed = parseToolArgs(call.function.arguments);
  if (!parsed.ok) {
    const content = `Error: ${call.function.name} was not called: ${parsed.error}. Send the arguments as one JSON object.`;
    return { call, result: { content, isError: true } };
  }
  const { attempts, ...result } = await dispatchWithRetry(
    tools,
    call.function.name,
    parsed.args,
    ctx,
    ladder,
  );
  activeSpan().setAttribute("neo.tool.attempts", attempts);
  return { call, result };
}

/** One call in its `execute_tool {name}` span (arguments and result only with NEO_TRACE_CONTENT). */
function inToolSpan(call: ToolCall, run: () => Promise<CallOutcome>): Promise<CallOutcome> {
  const name = call.function.name;
  const attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": name,
    "gen_ai.tool.call.id": call.id,
    "gen_ai.tool.type": "function",
    ...(traceContent() ? { "gen_ai.tool.call.arguments": call.function.arguments } : {}),
  };
  return inSpan(`execute_tool ${name}`, { attributes }, async (span) => {
    const out = await run();
    span.setAttribute("neo.tool.outcome", out.result.isError ? "error" : "ok");
    if (traceContent()) span.setAttribute("gen_ai.tool.call.result", out.result.content);
    return out;
  });
}

export async function runToolBatch(
  calls: readonly ToolCall[],
  tools: ToolSurface,
  turnCtx: Omit<ToolCallContext, "step">,
  ladder: LadderOptions,
): Promise<CallOutcome[]> {
  // Every call of this batch shares one step (per-step rules such as one approval prompt key on it).
  const ctx: ToolCallContext = { ...turnCtx, step: { callIds: calls.map((c) => c.id) } };
  for (const c of calls) await ctx.reporter.status(renderToolCall(c.function.name));
  const work = calls.map((call) => inToolSpan(call, () => runOne(call, tools, ctx, ladder)));
  return raceAbort(Promise.all(work), ctx.signal);
}
