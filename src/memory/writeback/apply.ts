/**
 * Writing a parsed write-back extract into one user's cortex.
 */
import type { ConversationKey, UserKey } from "../../core/keys.js";
import type { Pager } from "../cortex/pager.js";
import type { WritebackExtract } from "./parse.js";

export interface ApplyCounts {
  facts: number;
  userFacts: number;
  patterns: number;
  outcomes: number;
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
  return {
    facts: extract.facts.length,
    userFacts: extract.userFacts.length,
    patterns: extract.patterns.length,
    outcomes: extract.outcome ? 1 : 0,
  };
}
