/**
 * The active goal is derived, never stored: the GOAL line of the consolidated summary when there
 * is one, else the first user message of the window.
 */
import type { Message } from "../llm/types.js";

const GOAL_LINE = /^GOAL:\s*(.+)$/m;

export function activeGoal(summary: string | null, working: readonly Message[]): string {
  const fromSummary = summary ? GOAL_LINE.exec(summary)?.[1]?.trim() : undefined;
  if (fromSummary) return fromSummary;
  const first = working.find((m) => m.role === "user");
  return first?.content ?? "";
}
