/**
 * Run planned actions in order, stop at the first failure, and report what ran, what did not and
 * the transaction ids found in the results. A transport error counts as that action's failure.
 */
import { extractTxIds } from "./tx-ids.js";
import type { ActionResult, Outcome, PlannedAction } from "./types.js";

export type Dispatch = (action: PlannedAction) => Promise<{ content: string; isError: boolean }>;

export async function runActions(actions: readonly PlannedAction[], dispatch: Dispatch): Promise<Outcome> {
  const results: ActionResult[] = [];
  for (const [i, action] of actions.entries()) {
    let result: { content: string; isError: boolean };
    try {
      result = await dispatch(action);
    } catch (err) {
      result = {
        content: `failed to run: ${err instanceof Error ? err.message : String(err)}`,
        isError: true,
      };
    }
    results.push({ tool: action.tool, content: result.content, isError: result.isError });
    if (result.isError) {
      const notRun = actions.slice(i + 1);
      return { status: i === 0 ? "failure" : "partial", results, notRun, txIds: txIdsOf(results) };
    }
  }
  return { status: "success", results, notRun: [], txIds: txIdsOf(results) };
}

function txIdsOf(results: readonly ActionResult[]): string[] {
  return [...new Set(results.filter((r) => !r.isError).flatMap((r) => extractTxIds(r.content)))];
}
