/**
 * Where a tool call goes: a synthetic tool to its delegate (arguments validated), a Natural MCP tool
 * to its server (the requester's own process for a per-user server), an Escalate one to a refusal
 * pointing at `core_execute`, anything else to an in-band "unknown tool". Every result is rendered
 * and cut, and every call counted and logged (`observe.ts`).
 */
import type { z } from "zod";
import type { BoundTool } from "./bound-tools.js";
import { callElicitor } from "./elicit-call.js";
import { observeToolCall, UNKNOWN_TOOL_LABEL } from "./observe.js";
import { renderProgress, renderResult, resultFiles, truncateResult } from "./render.js";
import type { ToolSurfaceOptions } from "./surface-options.js";
import {
  conversationLookupArgs,
  coreExecuteArgs,
  describeArgsError,
  memoryRecallArgs,
  type SyntheticDelegate,
} from "./synthetic.js";
import {
  CONVERSATION_LOOKUP_TOOL,
  CORE_EXECUTE_TOOL,
  MEMORY_RECALL_TOOL,
  type ToolCallContext,
  type ToolResult,
} from "./types.js";

const intentArg = coreExecuteArgs.transform((a) => a.intent);
const queryArg = memoryRecallArgs.transform((a) => a.query);
const lookupArg = conversationLookupArgs.transform((a) => a.query);

type Dispatch = (name: string, args: Record<string, unknown>, ctx: ToolCallContext) => Promise<ToolResult>;

export interface ToolDispatch {
  /** The one dispatch of the model's calls (synthetic tools included). */
  dispatch: Dispatch;
  /** The executor's post-approval path: any bound MCP tool, Escalate included; no synthetic names. */
  dispatchPrivileged: Dispatch;
}

/**
 * `opts` is read at each call, not copied: a delegate may be wired after the surface is made.
 * `lookup` finds a bound tool in the surface's current binding.
 */
export function createToolDispatch(
  opts: ToolSurfaceOptions,
  lookup: (name: string) => BoundTool | undefined,
): ToolDispatch {
  const cut = (r: ToolResult): ToolResult => ({
    content: truncateResult(r.content, opts.resultMaxChars),
    isError: r.isError,
    ...(r.files?.length ? { files: r.files } : {}),
  });

  async function callBound(
    b: BoundTool,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
  ): Promise<ToolResult> {
    // The requester's own process for a per-user server: one dispatch, routed by who asked.
    const notes: string[] = [];
    const result = await b.conn.call(ctx.speaker.userKey, b.tool, args, b.name, {
      signal: ctx.signal,
      // A question gets half the call's time: the server has the rest to finish after the answer.
      elicit: callElicitor(ctx, b.server, opts.callTimeoutMs / 2, notes),
      // A lost progress line is no reason to fail the call it reports on.
      onProgress: (p) => void ctx.reporter.status(renderProgress(b.name, p)).catch(() => {}),
    });
    const files = resultFiles(result, b.tool);
    return cut({
      content: [renderResult(result), ...notes].join("\n"),
      isError: result.isError === true,
      ...(files.length ? { files } : {}),
    });
  }

  const unknownTool = (name: string): ToolResult => ({
    content: `unknown tool "${name}" — it is not available`,
    isError: true,
  });

  /** Names the model may reach; anything else is counted under one label (bounded cardinality). */
  const labelOf = (name: string): string =>
    name === CORE_EXECUTE_TOOL ||
    (name === MEMORY_RECALL_TOOL && opts.memoryRecall) ||
    (name === CONVERSATION_LOOKUP_TOOL && opts.conversationLookup) ||
    lookup(name)
      ? name
      : UNKNOWN_TOOL_LABEL;

  /** A synthetic tool's call: its arguments validated (in-band error), then its delegate, cut. */
  async function synthetic(
    tool: string,
    parse: (args: unknown) => z.ZodSafeParseResult<string>,
    delegate: SyntheticDelegate | undefined,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
  ): Promise<ToolResult> {
    const parsed = parse(args);
    if (!parsed.success) return { content: describeArgsError(tool, parsed.error), isError: true };
    if (!delegate) return { content: `${tool} is not available in this deployment`, isError: true };
    return cut(await delegate(parsed.data, ctx));
  }

  const escalateRefusal = (name: string): ToolResult => ({
    content:
      `"${name}" moves funds or needs a signature, so it cannot be called directly. ` +
      `Call ${CORE_EXECUTE_TOOL} with an intent describing exactly what to do (action, amount, asset, recipient); ` +
      "the user will be asked to approve the plan.",
    isError: true,
  });

  /** Where a model's call goes. Not async itself: a tool call is the hot path (bench/tools). */
  function route(name: string, args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolResult> {
    if (name === CORE_EXECUTE_TOOL)
      return synthetic(name, (a) => intentArg.safeParse(a), opts.coreExecute, args, ctx);
    if (name === MEMORY_RECALL_TOOL && opts.memoryRecall)
      return synthetic(name, (a) => queryArg.safeParse(a), opts.memoryRecall, args, ctx);
    if (name === CONVERSATION_LOOKUP_TOOL && opts.conversationLookup)
      return synthetic(name, (a) => lookupArg.safeParse(a), opts.conversationLookup, args, ctx);
    const b = lookup(name);
    if (!b) return Promise.resolve(unknownTool(name));
    if (b.class === "escalate") return Promise.resolve(escalateRefusal(name));
    return callBound(b, args, ctx);
  }

  return {
    dispatch: (name, args, ctx) =>
      observeToolCall({ label: labelOf(name), args, ctx }, () => route(name, args, ctx)),
    dispatchPrivileged: (name, args, ctx) => {
      const b = lookup(name);
      return observeToolCall({ label: b ? name : UNKNOWN_TOOL_LABEL, args, ctx, privileged: true }, () =>
        b ? callBound(b, args, ctx) : Promise.resolve(unknownTool(name)),
      );
    },
  };
}
