/**
 * One turn of the recursive tool-calling loop (seed 000/003), top to bottom: the opening messages
 * enter, then each iteration checks the stops, rebuilds the system block and budget stat, calls the
 * model and either ends on its answer or runs its tool calls and goes round again.
 */
import { budgetPct } from "../budget/budget.js";
import type { FileIntake } from "../files/intake.js";
import { LlmError } from "../llm/errors.js";
import type { AssistantMessage, Completion, UsageTags } from "../llm/types.js";
import { log } from "../log.js";
import type { MemoryPage } from "../memory-port.js";
import type { ToolCallContext } from "../tools/types.js";
import type { AnswerView } from "./answer-view.js";
import { overBudget } from "./budget-check.js";
import type { AgentDeps } from "./deps.js";
import { activeGoal } from "./goal.js";
import { CancelledError } from "./ladder.js";
import { cutOffReply, EMPTY_NUDGE, LENGTH_NUDGE } from "./notes.js";
import { recordStep } from "./observe.js";
import { honestPartial, type StopReason, type ToolRecord } from "./partial.js";
import { createAdaptCounter, createStallCheck } from "./progress.js";
import {
  buildSystemBlock,
  DEFAULT_IDENTITY,
  identityLine,
  type SystemBlock,
  withBudgetStat,
} from "./prompt.js";
import { runToolStep } from "./tool-step.js";
import type { Transcript } from "./transcript.js";
import type { OpenedTurn, TurnEntry } from "./turn-entry.js";
import type { TurnContext, TurnInput, TurnProgress, TurnResult } from "./types.js";

/** The turn's answer was shown, but logging it failed (`cause`): the turn is answered, not failed. */
export class AnswerShownError extends Error {
  constructor(cause: unknown) {
    super("the answer was shown but could not be logged", { cause });
  }
}

/** What one agent's turns run on: its deps and its conversation's transcript. */
export interface TurnParts {
  deps: AgentDeps;
  files: FileIntake;
  t: Transcript;
  entry: TurnEntry;
}

export async function runTurn(
  { deps, files, t, entry }: TurnParts,
  input: TurnInput,
  ctx: TurnContext,
  progress: TurnProgress,
  view: AnswerView,
): Promise<TurnResult> {
  const { limits } = deps;
  const tags: UsageTags = { purpose: "turn", conversation: ctx.conversation, user: input.speaker.userKey };
  const toolCtx: Omit<ToolCallContext, "step"> = { ...ctx, speaker: input.speaker };
  const ladder = { maxRetries: limits.maxRetriesPerTool, baseMs: limits.toolRetryBaseMs ?? 250 };
  const done: ToolRecord[] = [];
  const adapt = createAdaptCounter(limits.maxAdaptAttempts);
  const progressCheck = createStallCheck(limits.noProgressStall);
  let emptyNudged = false;
  let overflowed = false;
  let narration = "";

  const identity = identityLine(deps.identity ?? DEFAULT_IDENTITY, ctx, input.speaker);
  const fault = (query: string): Promise<MemoryPage> =>
    deps.memory.fault({
      user: input.speaker.userKey,
      conversation: ctx.conversation,
      place: ctx.place,
      query,
      activeGoal: activeGoal(t.summary, t.working),
      live: t.working,
    });
  const opened = await entry.open(input, ctx, progress, fault);
  try {
    return await loop(opened);
  } finally {
    // Whatever ends the turn, it ends after its opening message is in the log (or with the store's error).
    await opened.logged;
  }

  async function loop(opened: OpenedTurn): Promise<TurnResult> {
    const { asked, channel, tools, toolNotes } = opened;
    let page = opened.page;
    /** The opening message's write, until the first reply is used (`OpenedTurn.logged`). */
    let unlogged: Promise<void> | undefined = opened.logged;

    /**
     * The block as last composed, and what it was composed from (the rest holds for the turn): the
     * window is measured again after the answer, mostly from the same parts, and the same block
     * (the same string) is then neither composed nor hashed again.
     */
    let composed:
      | { page: MemoryPage; summary: string | null; goal: string; block: SystemBlock; text: string }
      | undefined;
    const window = () => {
      const schemas = tools.schemas();
      const goal = activeGoal(t.summary, t.working);
      if (composed?.page !== page || composed.summary !== t.summary || composed.goal !== goal) {
        const block = buildSystemBlock({
          identity,
          page,
          activeGoal: goal,
          summary: t.summary,
          channelInstructions: channel.instructions,
          toolNotes,
        });
        composed = { page, summary: t.summary, goal, block, text: `${block.head}\n\n${block.tail}` };
      }
      const pct = budgetPct({
        system: composed.text,
        messages: t.working,
        tools: schemas,
        contextWindow: limits.contextWindow,
      });
      return { tools: schemas, block: composed.block, pct };
    };
    const stop = async (reason: StopReason): Promise<TurnResult> => {
      const text = honestPartial(reason, done, activeGoal(t.summary, t.working));
      await t.append({ role: "assistant", content: text }, ctx);
      ctx.modelWorkDone?.();
      await view.say(text);
      return { status: "partial", text, ...progress };
    };

    for (;;) {
      if (ctx.signal.aborted) throw new CancelledError("cancelled");
      if (progress.steps >= limits.stepBudget)
        return stop({ kind: "step_budget", budget: limits.stepBudget });
      if (progress.steps > 0 && progress.steps % limits.refaultEvery === 0)
        page = await fault(`${asked}\n${narration}`);

      const spent = await overBudget(deps.budget, input.speaker.userKey, ctx);
      if (spent) return stop(spent);

      let w = window();
      if (w.pct >= limits.hardPct) {
        await t.compact("hard", ctx, { ...tags, purpose: "compaction" });
        w = window();
      }
      progress.steps++;
      recordStep();
      let res: Completion;
      try {
        res = await deps.llm.complete({
          role: "main",
          ...(channel.model ? { model: channel.model } : {}),
          system: w.block.head,
          context: withBudgetStat(w.block.tail, w.pct),
          messages: t.working,
          images: await files.images(ctx.conversation, t.working, ctx.files, ctx.signal),
          tools: w.tools,
          signal: ctx.signal,
          maxTokens: limits.maxOutputTokens,
          onText: view.sink(),
          tags,
        });
      } catch (e) {
        // The store's error, if the opening message was not logged, is the turn's: it never began.
        await unlogged;
        unlogged = undefined;
        // The endpoint counts tokens its own way: over its window, consolidate once and ask again.
        if (!(e instanceof LlmError) || e.code !== "LLM_CONTEXT_LENGTH" || overflowed) throw e;
        overflowed = true;
        log.warn(
          { conversation: ctx.conversation, estimatedPct: w.pct, contextWindow: limits.contextWindow },
          "the model refused the request as too long; compacting and asking again (is NEO_CONTEXT_WINDOW above the model's?)",
        );
        await t.compact("hard", ctx, { ...tags, purpose: "compaction" });
        continue;
      }
      // Nothing the reply says is acted on before the message it answers is in the log.
      await unlogged;
      unlogged = undefined;
      progress.tokens += res.usage.promptTokens + res.usage.completionTokens;
      // Text streamed with tool calls, or cut by the output limit, was not the answer.
      if (res.toolCalls.length > 0 || res.finishReason === "length") await view.dismiss();

      if (res.toolCalls.length === 0) {
        // Truncated text is never shown; the model is asked again, more compactly. The reply is
        // recorded (its start, marked) before the nudge, so the nudge follows an assistant message.
        if (res.finishReason === "length") {
          await t.append(cutOffReply(res.content), ctx);
          await t.append({ role: "user", content: LENGTH_NUDGE }, ctx);
          continue;
        }
        const text = (res.content ?? "").trim();
        if (!text) {
          // A second empty reply is not recorded: the honest partial is the assistant message.
          if (emptyNudged) return stop({ kind: "no_answer" });
          emptyNudged = true;
          await t.append({ role: "assistant", content: "" }, ctx);
          await t.append({ role: "user", content: EMPTY_NUDGE }, ctx);
          continue;
        }
        // Showing it may need the platform's room: asked for beside the write, not after it.
        view.answerSoon();
        await t.append({ role: "assistant", content: res.content }, ctx).catch(async (err: unknown) => {
          // The log could not take it (the store went away): the answer the user may be watching
          // being written is finished all the same, never left "stopped" to be answered again.
          await view.answer(text);
          throw new AnswerShownError(err);
        });
        // Unless the window wants compacting (model work), all that is left is showing the answer.
        const roomy = window().pct < limits.softPct;
        if (roomy) ctx.modelWorkDone?.();
        await view.answer(text);
        deps.memory.writeBack({
          user: input.speaker.userKey,
          conversation: ctx.conversation,
          place: ctx.place,
          transcript: [...t.working],
        });
        const answered: TurnResult = { status: "answered", text, ...progress };
        if (roomy) return answered;
        try {
          await t.compact("soft", ctx, { ...tags, purpose: "compaction" });
        } catch (e) {
          // Cancelled while consolidating: the answer stands; the window is compacted next time.
          if (!ctx.signal.aborted) throw e;
        }
        return answered;
      }

      // The same calls after they returned the same results noProgressStall times in a row are no
      // progress: stop without running them again (the batch is dropped, not half-recorded).
      const stalled = progressCheck.before(res.toolCalls);
      if (stalled) return stop(stalled);

      const assistant: AssistantMessage = {
        role: "assistant",
        content: res.content,
        tool_calls: res.toolCalls,
      };
      await t.append(assistant, ctx);
      // Text sent with tool calls is interim narration: shown as Status, not as an answer.
      if (res.content?.trim()) {
        narration = res.content;
        await ctx.reporter.status(res.content.trim());
      }

      const outcomes = await runToolStep(res.toolCalls, { tools, toolCtx, ladder, done }, t, ctx);
      progressCheck.after(outcomes);
      // Rung 2 counts attempts: the whole batch is one, and the model has seen every error of it.
      const exhausted = adapt.attempt(outcomes);
      if (exhausted) return stop(exhausted);

      // Cancellation point: messages that arrived meanwhile join the transcript before the next call.
      await entry.enterQueued(ctx, progress);
    }
  }
}
