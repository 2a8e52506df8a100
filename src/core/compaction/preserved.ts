/**
 * The trust contract (seed i3), bounded. Every high-entropy token of the compacted history that the
 * summarizer dropped is carried under `ARTIFACTS (preserved verbatim, newest first):`, deduplicated
 * and ordered by when it was last seen, within a token budget. Identifiers that no longer fit are
 * moved out: they stay in the conversation's log (append-only, so nothing is lost), the summary says
 * how many have been moved out so far, and `conversation_lookup` finds them again.
 */
import { estimateTokens } from "../budget/estimate.js";
import { tokensByRecency } from "./entropy.js";

export const PRESERVED_HEADING = "ARTIFACTS (preserved verbatim, newest first):";
/** Summaries written before the list was bounded used this heading; they are still read. */
const ANY_HEADING = /^ARTIFACTS \(preserved verbatim(?:, newest first)?\):$/;
const MARKER_LINE = /^\[compaction \d+: [a-z]+\]$/;
const MOVED_OUT = /^Moved out of this summary so far: (\d+) /;

/** The line that says how many identifiers have been moved out (always the summary's last line). */
export function movedOutLine(total: number, now: number): string {
  return (
    `Moved out of this summary so far: ${total} older identifier${total === 1 ? "" : "s"} (${now} at this consolidation). ` +
    "They are still in this conversation's history: call conversation_lookup with one, or with words near it."
  );
}

export interface SummaryParts {
  /** The written summary (the six sections), without marker, preserved list or moved-out line. */
  body: string;
  /** Preserved identifiers, newest first. */
  preserved: string[];
  /** Identifiers moved out so far. */
  movedOut: number;
}

/** Read a summary back into its parts. */
export function splitSummary(summary: string | null): SummaryParts {
  const lines = (summary ?? "").split("\n");
  if (lines[0] !== undefined && MARKER_LINE.test(lines[0])) lines.shift();
  const body: string[] = [];
  const preserved: string[] = [];
  let movedOut = 0;
  let inList = false;
  for (const line of lines) {
    const moved = MOVED_OUT.exec(line);
    if (moved) {
      movedOut = Number(moved[1]);
      inList = false;
    } else if (ANY_HEADING.test(line)) inList = true;
    else if (inList && line.startsWith("- ")) preserved.push(line.slice(2));
    else {
      inList = false;
      body.push(line);
    }
  }
  return { body: body.join("\n").trim(), preserved, movedOut };
}

export interface ContractInput {
  /** The new written summary (the summarizer's, or the safe tail's note). */
  body: string;
  /** The summary being replaced, if any (its body and list are older than `compacted`). */
  previous: string | null;
  /** Text of the compacted messages (`transcriptText`). */
  compacted: string;
  /** Tokens the preserved list and the moved-out line may take. */
  budgetTokens: number;
}

export interface ContractOutcome {
  /** `body`, then the preserved list and the moved-out line when there are any. */
  summary: string;
  /** Identifiers carried in the list, newest first. */
  preserved: string[];
  /** Identifiers moved out at this consolidation. */
  movedOut: string[];
}

/** Room kept for the heading and the moved-out line. */
const LIST_OVERHEAD = estimateTokens(`${PRESERVED_HEADING}\n${movedOutLine(9_999_999, 9_999_999)}`) + 2;

/** Carry every identifier `body` dropped, newest first, within the budget; the rest moves out. */
export function keepTrustContract(input: ContractInput): ContractOutcome {
  const prev = splitSummary(input.previous);
  // Oldest to newest by last sighting: the previous summary, its list (stored newest first), then
  // the compacted messages.
  const sightings = [
    ...tokensByRecency(prev.body),
    ...[...prev.preserved].reverse(),
    ...tokensByRecency(input.compacted),
  ];
  const seen = new Set<string>();
  const newestFirst: string[] = [];
  for (let i = sightings.length - 1; i >= 0; i--) {
    const t = sightings[i]!;
    if (seen.has(t)) continue;
    seen.add(t);
    if (!input.body.includes(t)) newestFirst.push(t);
  }
  let room = input.budgetTokens - LIST_OVERHEAD;
  let fit = 0;
  while (fit < newestFirst.length) {
    const cost = estimateTokens(`- ${newestFirst[fit]}`) + 1;
    if (cost > room) break;
    room -= cost;
    fit++;
  }
  const preserved = newestFirst.slice(0, fit);
  const movedOut = newestFirst.slice(fit);
  const total = prev.movedOut + movedOut.length;
  const parts = [input.body.trimEnd()];
  if (preserved.length) parts.push(PRESERVED_HEADING, ...preserved.map((t) => `- ${t}`));
  if (total > 0) parts.push(movedOutLine(total, movedOut.length));
  return { summary: parts.join("\n"), preserved, movedOut };
}
