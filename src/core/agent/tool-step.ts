/**
 * One tool step into the transcript: the batch run, and every call's result appended in call order
 * (a file a tool made delivered to the user on the way). The transcript stays a valid request even
 * when the step is cancelled.
 */
import type { ToolCall, ToolMessage } from "../llm/types.js";
import type { ToolCallContext, ToolSurface } from "../tools/types.js";
import type { LadderOptions } from "./ladder.js";
import type { ToolRecord } from "./partial.js";
import { type CallOutcome, runToolBatch } from "./run-tools.js";
import type { Transcript } from "./transcript.js";
import type { TurnContext } from "./types.js";
import { deliverFiles } from "./with-files.js";

export const CANCELLED_RESULT = "Cancelled by the user before this call finished.";

/** What a turn's tool steps run with. */
export interface ToolStepRun {
  tools: ToolSurface;
  toolCtx: Omit<ToolCallContext, "step">;
  ladder: LadderOptions;
  /** Each call's name and whether it went well, for the honest partial. */
  done: ToolRecord[];
}

export async function runToolStep(
  calls: readonly ToolCall[],
  run: ToolStepRun,
  t: Transcript,
  ctx: TurnContext,
): Promise<CallOutcome[]> {
  let outcomes: CallOutcome[];
  try {
    outcomes = await runToolBatch(calls, run.tools, run.toolCtx, run.ladder);
  } catch (e) {
    // Every call gets a result even when cancelled, so the transcript stays a valid request.
    for (const c of calls) {
      await t.append({ role: "tool", tool_call_id: c.id, content: CANCELLED_RESULT }, ctx);
    }
    throw e;
  }
  for (const { call, result } of outcomes) {
    // Files a tool made are the user's to see: uploaded now, and the model told where they went.
    const note = result.files?.length
      ? await deliverFiles(ctx.reporter, result.files, call.function.name)
      : "";
    const msg: ToolMessage = { role: "tool", tool_call_id: call.id, content: `${result.content}${note}` };
    await t.append(msg, ctx);
    run.done.push({ name: call.function.name, ok: !result.isError });
  }
  return outcomes;
}
