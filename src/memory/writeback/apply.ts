/**
 * Writing a parsed write-back extract into one user's cortex, every record stamped with the place
 * the turn ran in.
 */
import type { UserKey } from "../../core/keys.js";
import type { WriteBackJob } from "../../core/memory-port.js";
import { visibleIn } from "../../core/place.js";
import type { Pager } from "../cortex/pager.js";
import type { GoalRecord, Origin } from "../cortex/records.js";
import { normalizeStatement } from "../cortex/text.js";
import type { GoalChange, WritebackExtract } from "./parse.js";
import { lastExchange } from "./prompt.js";

export interface ApplyCounts {
  facts: number;
  userFacts: number;
  patterns: number;
  outcomes: number;
  constraints: number;
  /** Goals opened, closed or done (0 or 1). */
  goals: number;
}

/** The user's own words ask for it; a tool result or page the model read cannot. */
const ASKED_EVERYWHERE = /\beverywhere\b/i;

/**
 * Where a section's records are learned: its turns' conversation and place, widened only when the
 * cheap model says the user asked for it AND the user's own messages of those turns say
 * "everywhere" (so text the model merely read, a tool result, a pasted page or the user's words in
 * another conversation, cannot widen a DM's secrets).
 */
export function originOf(section: readonly WriteBackJob[], extract: WritebackExtract): Origin {
  // The jobs of a section share one conversation, so one place.
  const { conversation, place } = section[0]!;
  const words = section.map((j) => lastExchange(j.transcript, j.user)?.user ?? "").join("\n");
  const widen = extract.everywhere && ASKED_EVERYWHERE.test(words);
  return { conversation, learned: { ...place, ...(widen ? { everywhere: true } : {}) } };
}

export async function applyWriteback(
  pager: Pager,
  user: UserKey,
  source: Origin,
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
async function applyGoal(pager: Pager, user: UserKey, source: Origin, change: GoalChange) {
  // Only goals this place may see: the model was shown no other, so it can only mean one of these.
  const open = (await pager.records(user))
    .filter(
      (r): r is GoalRecord =>
        r.kind === "goal" && r.status === "active" && visibleIn(r.learned, source.learned),
    )
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
