/**
 * Pattern identity and reinforcement (seed 001): the same name, else trigger, else steps means the
 * same pattern; seeing it again raises coverage and nudges strength toward 1. Pure.
 */
import type { PatternRecord, PatternSpec } from "./records.js";
import { normalizeStatement } from "./text.js";

/** A fresh pattern is a low-confidence candidate. */
export const CANDIDATE_STRENGTH = 0.3;
/** Each reinforcement closes a quarter of the gap to 1. */
const REINFORCE_STEP = 0.25;

export function samePattern(a: PatternRecord, b: PatternSpec): boolean {
  const n = normalizeStatement;
  return (
    n(a.name) === n(b.name) ||
    n(a.trigger) === n(b.trigger) ||
    n(a.steps.join("\n")) === n(b.steps.join("\n"))
  );
}

/** `a` followed by the items of `b` it does not already hold (normalized comparison). */
function union(a: readonly string[], b: readonly string[] | undefined): string[] {
  const seen = new Set(a.map(normalizeStatement));
  const out = [...a];
  for (const item of b ?? []) {
    const k = normalizeStatement(item);
    if (!k || seen.has(k)) continue;
    seen.add(k);
    out.push(item.trim());
  }
  return out;
}

export function reinforce(existing: PatternRecord, spec: PatternSpec, now: number): PatternRecord {
  return {
    ...existing,
    updatedAt: now,
    preconditions: union(existing.preconditions, spec.preconditions),
    gotchas: union(existing.gotchas, spec.gotchas),
    successCriteria: union(existing.successCriteria, spec.successCriteria),
    coverage: existing.coverage + 1,
    strength: Math.min(1, existing.strength + (1 - existing.strength) * REINFORCE_STEP),
  };
}

export function candidate(
  spec: PatternSpec,
  base: Pick<PatternRecord, "id" | "createdAt" | "updatedAt" | "source">,
): PatternRecord {
  return {
    ...base,
    kind: "pattern",
    name: spec.name.trim(),
    trigger: spec.trigger.trim(),
    preconditions: union([], spec.preconditions),
    steps: spec.steps.map((s) => s.trim()).filter(Boolean),
    gotchas: union([], spec.gotchas),
    successCriteria: union([], spec.successCriteria),
    coverage: 1,
    strength: CANDIDATE_STRENGTH,
  };
}
