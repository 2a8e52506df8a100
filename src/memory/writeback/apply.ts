/**
 * Writing a parsed write-back extract into one user's cortex.
 */
import type { ConversationKey, UserKey } from "../../core/keys.js";
import type { Pager } from "../cortex/pager.js";
import type { GoalRecord } from "../cortex/records.js";
import { normalizeStatement } from "../cortex/text.js";
import type { GoalChange, WritebackExtract } from "./parse.js";

export interface ApplyCounts {
  facts: number;
  userFacts: number;
  patterns: number;
  outcomes: number;
  constraints: number;
  /** Goals opened, closed or done (0 or 1). */
  goals: number;
}

export async function applyWriteback(
  pager: Pager,
  user: UserKey,
  source: ConversationKey,
  extract: WritebackExtract,
): Promise<ApplyCounts> {
  for (const f of extract.facts) await pager.rememberFact(user, f, source);
  for (const f of extract.userFacts) await pager.rememberUserFact(user, f, source);
  for (const p of extract.patterns) await pager.reinforcePattern(user, p, source);
  if (extract.outcome)
    await pager.recordOutcome(user, extract.outcome.summary, extract.outcome.status, source);
  for (const c of extract.constraints) await pager.rememberConstraint(user, c, source);
  const goals = extract.goal ? await applyGoal(pager, user, source, extract.goal) : 0;
  return {
    facts: extract.facts.length,
    userFacts: extract.userFacts.length,
    patterns: extract.patterns.length,
    outcomes: extract.outcome ? 1 : 0,
    constraints: extract.constraints.length,
    goals,
  };
}

/**
 * An opened goal is recorded unless it is already the open one; a finished or dropped goal closes
 * the open goal it names, else the newest open one (the one the model was shown). 1 when a record
 * was written.
 */
async function applyGoal(pager: Pager, user: UserKey, source: ConversationKey, change: GoalChange) {
  const open = (await pager.records(user))
    .filter((r): r is GoalRecord => r.kind === "goal" && r.status === "active")
    .sort((a, b) => b.updatedAt - a.updatedAt);
  const same = open.find((g) => normalizeStatement(g.statement) === normalizeStatement(change.statement));
  if (change.status === "active") {
    if (same) return 0;
    await pager.setGoal(user, change.statement, source);
    return 1;
  }
  const target = same ?? open[0];
  if (!target) return 0;
  await pager.closeGoal(user, target.id, change.status);
  return 1;
}
