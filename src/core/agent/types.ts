/**
 * The agent loop's contract. The working transcript is the only state; everything a turn shows the
 * model (system block, budget stat) is derived from it each iteration.
 */

import type { ApprovalChannel } from "../approvals/types.js";
import type { FileSource, InboundFile } from "../files/types.js";
import type { ConversationKey, Speaker, UserKey } from "../keys.js";
import type { Message } from "../llm/types.js";
import type { Place } from "../place.js";
import type { AnswerKey, Reporter } from "../reporter.js";
import type { FormChannel } from "../tools/elicitation.js";
import type { BudgetScope } from "../usage/types.js";
import type { AnswerFileLimits } from "./answer-file.js";

/**
 * Persisted per conversation, append-only. Replaying the events after the last `compaction`
 * rebuilds exactly the transcript the model saw last.
 */
export type AgentEvent =
  | { type: "message"; message: Message; at: number }
  | {
      type: "compaction";
      /** The consolidated active-session summary (GOAL / DECISIONS / ARTIFACTS / ...). */
      summary: string;
      /** The working transcript kept after compaction (the start of the new window). */
      kept: Message[];
      reason: "hard" | "soft" | "manual";
      at: number;
    }
  | { type: "reset"; at: number }
  /**
   * The requester reached 80 % (`budget_warning`, told in a Notice) or 100 % (`budget_exceeded`, the
   * turn ended with an honest partial) of a USD budget (seed 004's cost events).
   */
  | {
      type: "budget_warning" | "budget_exceeded";
      scope: BudgetScope;
      user: UserKey;
      usedUsd: number;
      limitUsd: number;
      at: number;
    };

/** The state an agent is built from: what the events replay to. */
export interface AgentState {
  working: Message[];
  summary: string | null;
}

/** One inbound user message as the loop sees it. */
export interface TurnInput {
  text: string;
  speaker: Speaker;
  /**
   * Earlier thread messages ("Name: text", oldest first) brought along as context. They enter the
   * transcript as their own message, without a speaker: they are not the requester's words.
   */
  context?: string[];
  /** Files attached to the message, read when it enters the transcript. */
  files?: InboundFile[];
}

export interface TurnContext {
  conversation: ConversationKey;
  /**
   * Channels and threads where several people may speak: user messages are prefixed with the
   * author's display name. DMs and the console: no prefix.
   */
  shared: boolean;
  /** Where the turn runs (DM, private or public channel, and the workspace): what memory may show. */
  place: Place;
  reporter: Reporter;
  /** The `key` this turn's answer is said with (`Reporter.say`). */
  answerKey?: AnswerKey;
  approvals: ApprovalChannel;
  /** Where MCP servers' questions are shown to the requester (`ToolCallContext.forms`). */
  forms?: FormChannel;
  /** Where this platform's files are fetched from (absent: files are named, not read). */
  files?: FileSource;
  signal: AbortSignal;
  /**
   * The requester's messages queued behind the turn's opening one; drained when the turn starts (so
   * a backlog is answered in one turn) and at each cancellation point, in order.
   */
  drainInbox?: () => TurnInput[];
  /**
   * Called for every event, so a crash loses nothing: awaited before the loop acts on it (the one
   * exception: the opening message's write runs while the model is asked, and is awaited before
   * the model's reply is used). Written in call order; a call made while an earlier one is in
   * flight waits for it and fails if it failed.
   */
  onEvent?: (event: AgentEvent) => Promise<void>;
  /**
   * The turn's model work is over: its answer is logged and what is left is showing it, which may
   * wait for the platform's pacing. The turn's slot may go to another turn meanwhile.
   */
  modelWorkDone?: () => void;
}

export type TurnStatus = "answered" | "partial" | "cancelled" | "failed";

/** Steps taken, inputs consumed and tokens used by the running turn, also reported when it ends early. */
export interface TurnProgress {
  steps: number;
  consumed: number;
  tokens: number;
}

export interface TurnResult {
  status: TurnStatus;
  /** What was said to the user last (the answer, or the honest partial). */
  text: string;
  steps: number;
  /** User inputs the turn consumed: the opening one plus any drained from the inbox. */
  consumed: number;
  /** Tokens (prompt + completion) of the turn's own model calls; compaction calls not included. */
  tokens: number;
}

/** Loop limits; defaults are the seed's numbers (see `src/config.ts`). */
export interface AgentLimits {
  contextWindow: number;
  softPct: number;
  hardPct: number;
  stepBudget: number;
  noProgressStall: number;
  refaultEvery: number;
  maxRetriesPerTool: number;
  maxAdaptAttempts: number;
  maxOutputTokens: number;
  /** The consolidated summary's cap, in percent of the window (`NEO_SUMMARY_PCT`). */
  summaryPct: number;
  /** First backoff of the tool retry rung, doubled per retry (default 250 ms). */
  toolRetryBaseMs?: number;
  /** When an answer is sent as a file (default `DEFAULT_ANSWER_FILE_LIMITS`). */
  answerFile?: AnswerFileLimits;
}
