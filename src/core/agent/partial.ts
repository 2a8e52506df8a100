/**
 * The honest partial (ladder rung 4): what stopped the turn, what was done, what was not.
 */
import { renderToolCall } from "./display.js";

export interface ToolRecord {
  name: string;
  ok: boolean;
}

export type StopReason =
  | { kind: "step_budget"; budget: number }
  /** The same calls came back `repeats` times in a row; the runs before returned the same results. */
  | { kind: "stall"; tool: string; repeats: number }
  /** `tool` returned errors in `attempts` of the model's attempts (`errors` errors in all). */
  | { kind: "adapt_exhausted"; tool: string; attempts: number; errors: number }
  | { kind: "no_answer" }
  /** A USD budget is used up; `why` says whose, how much and when it resets. */
  | { kind: "budget"; why: string };

function why(r: StopReason): string {
  switch (r.kind) {
    case "step_budget":
      return `I reached my step limit (${r.budget} steps) before finishing`;
    case "stall":
      return `I was repeating the same call (${renderToolCall(r.tool)}, ${r.repeats} times in a row) and it returned the same result each time, so I stopped`;
    case "adapt_exhausted":
      return (
        `${renderToolCall(r.tool)} returned errors in ${r.attempts} of my attempts (${r.errors} error${r.errors === 1 ? "" : "s"} in all); ` +
        `I read the errors and tried again ${r.attempts - 1} time${r.attempts === 2 ? "" : "s"} without success, so I stopped`
      );
    case "no_answer":
      return "I could not produce an answer";
    case "budget":
      return r.why;
  }
}

/** The text said to the user when a turn stops without an answer. */
export function honestPartial(reason: StopReason, done: readonly ToolRecord[], goal: string): string {
  const counts = new Map<string, { ok: number; failed: number }>();
  for (const d of done) {
    const c = counts.get(d.name) ?? { ok: 0, failed: 0 };
    if (d.ok) c.ok++;
    else c.failed++;
    counts.set(d.name, c);
  }
  const did = [...counts].map(([name, c]) => {
    const parts = [c.ok ? `${c.ok} ok` : "", c.failed ? `${c.failed} failed` : ""].filter(Boolean).join(", ");
    return `${renderToolCall(name)} (${parts})`;
  });
  const doneText = did.length ? `What I did: ${did.join("; ")}.` : "I did not complete any tool calls.";
  const notDone = goal
    ? `Not done: ${goal.length > 300 ? `${goal.slice(0, 297)}...` : goal}`
    : "The request is not done.";
  return `${why(reason)}.\n${doneText}\n${notDone}\nTell me how you'd like to continue.`;
}
