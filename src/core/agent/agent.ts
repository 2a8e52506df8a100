/**
 * An agent: one conversation's transcript and the turns run on it, one at a time (seed 000/003).
 * `chat` brackets a turn (the loop itself is `runTurn` in turn.ts): it turns what went wrong into
 * the turn's status, finishes any open answer draft and records the turn's end.
 */
import type { CompactionReason } from "../compaction/compact.js";
import { createFileIntake } from "../files/intake.js";
import { DEFAULT_FILE_LIMITS } from "../files/types.js";
import { LlmError } from "../llm/errors.js";
import { log } from "../log.js";
import type { AnswerKey, Reporter } from "../reporter.js";
import { createAnswerView, showAnswer } from "./answer-view.js";
import type { AgentDeps } from "./deps.js";
import { CancelledError } from "./ladder.js";
import { modelTroubleText } from "./model-trouble.js";
import { recordTurnEnd } from "./observe.js";
import { createTranscript } from "./transcript.js";
import { runTurn } from "./turn.js";
import { createTurnEntry } from "./turn-entry.js";
import type { AgentState, TurnContext, TurnInput, TurnProgress, TurnResult } from "./types.js";

export class AgentBusyError extends Error {
  readonly code = "AGENT_BUSY";
}

export interface Agent {
  /** Run one user turn to an answer, an honest partial, a cancellation or a failure. */
  chat(input: TurnInput, ctx: TurnContext): Promise<TurnResult>;
  /** A copy of the state (what the events replay to). */
  state(): AgentState;
  /** Compact the window now (hard/soft from the loop; manual from `/neo compact`). */
  compact(reason: CompactionReason, ctx: TurnContext): Promise<void>;
  /**
   * Post an answer the transcript already holds (a turn resumed after a crash) as its turn showed
   * it: long answers as the same file and message, under `key`.
   */
  show(answer: string, reporter: Reporter, key?: AnswerKey): Promise<void>;
}

export function createAgent(deps: AgentDeps, initial?: AgentState): Agent {
  const { limits } = deps;
  const files = deps.files ?? createFileIntake({ limits: DEFAULT_FILE_LIMITS });
  const t = createTranscript(deps, initial);
  const entry = createTurnEntry(deps, files, t);
  let busy = false;

  return {
    async chat(input, ctx) {
      if (busy) throw new AgentBusyError("a turn is already running for this conversation");
      busy = true;
      const progress: TurnProgress = { steps: 0, consumed: 1, tokens: 0 };
      const view = createAnswerView(ctx.reporter, input.speaker.userKey, ctx.answerKey, limits.answerFile);
      const startedAt = Date.now();
      // A turn that throws (a broken contract below the loop) still ends here, as failed.
      let status: TurnResult["status"] = "failed";
      try {
        const result = await runTurn({ deps, files, t, entry }, input, ctx, progress, view).catch(
          async (e: unknown): Promise<TurnResult> => {
            if (ctx.signal.aborted || e instanceof CancelledError) {
              return { status: "cancelled", text: "", ...progress };
            }
            if (!(e instanceof LlmError)) throw e;
            log.error({ code: e.code, err: e.message, conversation: ctx.conversation }, "turn failed");
            const text = modelTroubleText(e);
            await view.say(text);
            return { status: "failed", text, ...progress };
          },
        );
        status = result.status;
        // A cancelled turn keeps its images for the next turn of the thread, which releases them.
        if (status !== "cancelled") await files.release(ctx.conversation, t.working);
        return result;
      } finally {
        // A draft the turn left open (cancelled mid-answer) is finished with what it showed.
        await view
          .close()
          .catch((err: unknown) =>
            log.warn({ err, conversation: ctx.conversation }, "could not finish an open answer draft"),
          );
        busy = false;
        recordTurnEnd({ conversation: ctx.conversation, status, ...progress, startedAt });
      }
    },
    state: () => t.state(),
    compact: async (reason, ctx) => {
      if (t.working.length === 0) return;
      await t.compact(reason, ctx);
    },
    show: (answer, reporter, key) => showAnswer(reporter, answer, limits.answerFile, key),
  };
}
