/**
 * One compaction: summarize the older part of the window, validate the summary against the trust
 * contract, keep the tail. If summarizing fails, degrade to the safe tail (seed: safeTail).
 */

import { metrics } from "../../ops/metrics.js";
import { messagesTokens } from "../budget/budget.js";
import { estimateTokens } from "../budget/estimate.js";
import type { LlmClient, Message, UsageTags } from "../llm/types.js";
import { log } from "../log.js";
import { transcriptText } from "./entropy.js";
import { compactionMarker, compactionNumber } from "./marker.js";
import { keepTrustContract, splitSummary } from "./preserved.js";
import { compactionCut, safeTailStart } from "./safe-tail.js";
import { renderHistory, summarize } from "./summarize.js";

export type CompactionReason = "hard" | "soft" | "manual";

/** What each compaction announces through `Notice` (the seed's words for hard and soft). */
export const COMPACTION_NOTICE: Record<CompactionReason, string> = {
  hard: "I'm right at my working-memory limit — one moment while I consolidate...",
  soft: "We've covered a lot — let me quickly consolidate where we are...",
  manual: "Consolidating this conversation — one moment...",
};

/**
 * Opens a kept tail that would otherwise start with an assistant message (a cut in the middle of a
 * long tool loop): a request's transcript starts with a user message (turn alternation).
 */
export const KEPT_TAIL_NOTE =
  "[Neo runtime] What came before this point is in the consolidated summary. Continue from here.";

/** The kept tail as the start of a new window: it opens with a user message. */
function keptTail(kept: readonly Message[]): Message[] {
  return kept[0]?.role === "assistant" ? [{ role: "user", content: KEPT_TAIL_NOTE }, ...kept] : [...kept];
}

/** Share of the context window the kept tail may use. */
export const KEEP_TAIL_FRACTION = 0.2;

export interface CompactionInput {
  working: readonly Message[];
  summary: string | null;
  reason: CompactionReason;
  contextWindow: number;
  /** The summary's cap, in percent of the window (`NEO_SUMMARY_PCT`). */
  summaryPct: number;
  llm: LlmClient;
  tags: UsageTags;
  signal: AbortSignal;
}

export interface CompactionOutcome {
  /** New summary, starting with its compaction marker. */
  summary: string;
  kept: Message[];
  /** True when the summarizer failed and the safe tail was kept instead. */
  degraded: boolean;
  /** Identifiers the summarizer dropped that the preserved list carries, newest first. */
  preserved: string[];
  /** Identifiers that no longer fit in the summary (still in the conversation's log). */
  movedOut: string[];
}

/** The summary's cap in tokens; the summarizer may write half of it, the preserved list fills the rest. */
export function summaryCapTokens(contextWindow: number, summaryPct: number): number {
  return Math.floor((contextWindow * summaryPct) / 100);
}

export async function compactWindow(input: CompactionInput): Promise<CompactionOutcome> {
  const n = compactionNumber(input.summary) + 1;
  const marker = compactionMarker(n, input.reason);
  const cap = summaryCapTokens(input.contextWindow, input.summaryPct);
  const keep = Math.floor(input.contextWindow * KEEP_TAIL_FRACTION);
  const cut = compactionCut(input.working, keep, input.reason !== "hard");
  const compacted = input.working.slice(0, cut);
  const previous = splitSummary(input.summary);
  /** The written part plus the identifiers it dropped, within what is left of the cap. */
  const contract = (body: string, history: readonly Message[]) =>
    keepTrustContract({
      body,
      previous: input.summary,
      compacted: transcriptText(history),
      budgetTokens: cap - estimateTokens(`${marker}\n${body}`),
    });
  try {
    const body = await summarize(
      input.llm,
      renderHistory(previous.body || null, compacted),
      input.tags,
      input.signal,
      Math.max(256, Math.floor(cap / 2)),
    );
    const out = contract(body, compacted);
    metrics.compactions.inc({ reason: input.reason, result: "summary" });
    return {
      summary: `${marker}\n${out.summary}`,
      kept: keptTail(input.working.slice(cut)),
      degraded: false,
      preserved: out.preserved,
      movedOut: out.movedOut,
    };
  } catch (e) {
    if (input.signal.aborted) throw e;
    const start = safeTailStart(input.working);
    log.warn(
      { err: (e as Error).message, dropped: start, keptTokens: messagesTokens(input.working.slice(start)) },
      "compaction summary failed; keeping the safe tail",
    );
    // The earlier summary still describes what came before it; the dropped messages are named as lost,
    // and their identifiers are still carried verbatim (the trust contract needs no model).
    const lost =
      start > 0 ? `Summary unavailable: ${start} earlier messages were dropped.` : "Summary unavailable.";
    const out = contract(
      `${lost}${previous.body ? `\n${previous.body}` : ""}`,
      input.working.slice(0, start),
    );
    metrics.compactions.inc({ reason: input.reason, result: "safe_tail" });
    return {
      summary: `${marker}\n${out.summary}`,
      kept: keptTail(input.working.slice(start)),
      degraded: true,
      preserved: out.preserved,
      movedOut: out.movedOut,
    };
  }
}
