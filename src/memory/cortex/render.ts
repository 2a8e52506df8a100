/**
 * Rendering cortex data into system-block sections and the `memory_recall` digest. Pure.
 */
import { type PinnedBlock, recordLine, type ScoredRecord } from "./ranking.js";
import type { PatternRecord, TurnRecord } from "./records.js";

const bullets = (items: readonly string[]) => items.map((i) => `- ${i}`).join("\n");

/**
 * The cortex's part of the pinned block: the user's hard constraints, profile and open goal. (The
 * loop pins identity and the inviolable rules itself: they hold with or without memory.)
 */
export function renderPinned(p: PinnedBlock): string {
  const parts: string[] = [];
  if (p.constraints.length)
    parts.push(
      `Hard constraints (the user set these; never violate them):\n${bullets(p.constraints.map((c) => c.statement))}`,
    );
  if (p.profile.length)
    parts.push(`About the user you are talking to:\n${bullets(p.profile.map((f) => f.statement))}`);
  if (p.activeGoal) parts.push(`Open goal (set earlier): ${p.activeGoal}`);
  return parts.join("\n\n");
}

export function renderRetrieved(records: readonly ScoredRecord[]): string {
  if (records.length === 0) return "";
  return `Things you remember that may be relevant:\n${bullets(records.map((s) => recordLine(s.record)))}`;
}

export function renderPattern(p: PatternRecord): string {
  const lines = [
    `${p.name} (seen ${p.coverage}×, strength ${p.strength.toFixed(2)}${p.strength < 0.5 ? ", candidate" : ""})`,
    `  when: ${p.trigger}`,
  ];
  if (p.preconditions.length) lines.push(`  preconditions: ${p.preconditions.join("; ")}`);
  lines.push(...p.steps.map((s, i) => `  ${i + 1}. ${s}`));
  if (p.gotchas.length) lines.push(`  gotchas: ${p.gotchas.join("; ")}`);
  if (p.successCriteria.length) lines.push(`  done when: ${p.successCriteria.join("; ")}`);
  return lines.join("\n");
}

export function renderPatterns(patterns: readonly ScoredRecord<PatternRecord>[]): string {
  if (patterns.length === 0) return "";
  return `Procedures that worked before for this kind of goal:\n${patterns.map((p) => renderPattern(p.record)).join("\n")}`;
}

/**
 * Each recalled turn's text, kept per turn record: records are never changed in place, and a
 * user's recent turns are recalled again turn after turn (formatting the date is most of the cost).
 */
const recalledText = new WeakMap<TurnRecord, string>();

function recalledTurn(t: TurnRecord): string {
  let text = recalledText.get(t);
  if (text === undefined) {
    text = `[${new Date(t.at).toISOString().slice(0, 16).replace("T", " ")}] user: ${t.user}\nNeo: ${t.assistant}`;
    recalledText.set(t, text);
  }
  return text;
}

export function renderRecalled(turns: readonly TurnRecord[]): string {
  if (turns.length === 0) return "";
  const body = turns.map(recalledTurn).join("\n\n");
  return `Earlier conversations with this user that may be relevant:\n${body}`;
}
