/**
 * The recursive tool-calling loop (seed 000/003). The working transcript and the summary are the
 * only state; the active goal, the system block and the budget stat are derived from them on every
 * iteration. Every appended message and every compaction goes through `ctx.onEvent` first.
 */
import { budgetPct } from "../budget/budget.js";
import {
  type ChannelSettings,
  channelOf,
  DEFAULT_CHANNEL_SETTINGS,
  restrictTools,
} from "../channels/index.js";
import { COMPACTION_NOTICE, type CompactionReason, compactWindow } from "../compaction/compact.js";
import { createFileIntake } from "../files/intake.js";
import { DEFAULT_FILE_LIMITS } from "../files/types.js";
import { LlmError } from "../llm/errors.js";
import type { AssistantMessage, Completion, Message, ToolMessage, UsageTags } from "../llm/types.js";
import { log } from "../log.js";
import type { MemoryPage } from "../memory-port.js";
import type { AnswerKey, Reporter } from "../reporter.js";
import type { ToolCallContext } from "../tools/types.js";
import { type AnswerView, createAnswerView, showAnswer } from "./answer-view.js";
import type { AgentDeps } from "./deps.js";
import { activeGoal } from "./goal.js";
import { CancelledError } from "./ladder.js";
import { modelTroubleText } from "./model-trouble.js";
import { cutOffReply, EMPTY_NUDGE, LENGTH_NUDGE } from "./notes.js";
import { recordStep, recordTurnEnd } from "./observe.js";
import { honestPartial, type StopReason, type ToolRecord } from "./partial.js";
import { createAdaptCounter, createStallCheck } from "./progress.js";
import { buildSystemBody, DEFAULT_IDENTITY, identityLine, withBudgetStat } from "./prompt.js";
import { runToolBatch } from "./run-tools.js";
import type { AgentState, TurnContext, TurnInput, TurnResult } from "./types.js";
import { contextMessage, cutNotice, enterUserMessage } from "./user-message.js";
import { deliverFiles, IMAGES_UNREAD_NOTICE, imagesToldUnread } from "./with-files.js";

export const CANCELLED_RESULT = "Cancelled by the user before this call finished.";

/** The turn's answer was shown, but logging it failed (`cause`): the turn is answered, not failed. */
export class AnswerShownError extends Error {
  constructor(cause: unknown) {
    super("the answer was shown but could not be logged", { cause });
  }
}

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
  let working: Message[] = [...(initial?.working ?? [])];
  let summary: string | null = initial?.summary ?? null;
  let busy = false;

  /** A store that cannot be read leaves the channel on its defaults for this turn (logged). */
  const channelSettings = async (conversation: string): Promise<ChannelSettings> => {
    if (!deps.channels) return DEFAULT_CHANNEL_SETTINGS;
    try {
      return await deps.channels.get(channelOf(conversation));
    } catch (err) {
      log.warn({ err, conversation }, "channel settings unreadable; this turn uses the defaults");
      return DEFAULT_CHANNEL_SETTINGS;
    }
  };

  const append = async (m: Message, ctx: TurnContext) => {
    working.push(m);
    await ctx.onEvent?.({ type: "message", message: m, at: Date.now() });
  };

  /** A user message joins the transcript (cut, and the user told, if it alone would crowd out the window). */
  const enter = async (input: TurnInput, ctx: TurnContext): Promise<string> => {
    // Other people's earlier messages come first, as their own message with no speaker.
    if (input.context?.length) await append({ role: "user", content: contextMessage(input.context) }, ctx);
    if (!input.files?.length) {
      const m = enterUserMessage(input, ctx.shared, limits.contextWindow);
      if (m.cut) await ctx.reporter.notice(cutNotice(m.cut));
      await append({ role: "user", content: m.content, speaker: input.speaker }, ctx);
      return m.text;
    }
    // Files are read (and images kept for the turn) before the message is logged, which names them.
    const told = imagesToldUnread(working);
    const read = await files.read(ctx.conversation, input.files, ctx.files, ctx.signal);
    for (const n of read.notices) await ctx.reporter.notice(n);
    if (read.unreadImages > 0 && !told) await ctx.reporter.notice(IMAGES_UNREAD_NOTICE);
    const text = input.text ? `${input.text}\n${read.text}` : read.text;
    const m = enterUserMessage({ ...input, text }, ctx.shared, limits.contextWindow);
    if (m.cut) await ctx.reporter.notice(cutNotice(m.cut));
    await append({ role: "user", content: m.content, speaker: input.speaker, files: read.refs }, ctx);
    // Memory is searched with the person's words, not the files' contents.
    return input.text;
  };

  /**
   * Messages that arrived meanwhile join the transcript (the inbox hands over only the requester's
   * own, in order; other people's wait for their own turn). Returns their texts as read.
   */
  const enterQueued = async (ctx: TurnContext, progress: Progress): Promise<string[]> => {
    const texts: string[] = [];
    for (const queued of ctx.drainInbox?.() ?? []) {
      texts.push(await enter(queued, ctx));
      progress.consumed++;
    }
    return texts;
  };

  const compact = async (reason: CompactionReason, ctx: TurnContext, tags?: UsageTags) => {
    await ctx.reporter.notice(COMPACTION_NOTICE[reason]);
    const out = await compactWindow({
      working,
      summary,
      reason,
      contextWindow: limits.contextWindow,
      summaryPct: limits.summaryPct,
      llm: deps.llm,
      tags: tags ?? { purpose: "compaction", conversation: ctx.conversation },
      signal: ctx.signal,
    });
    summary = out.summary;
    working = [...out.kept];
    await ctx.onEvent?.({ type: "compaction", summary: out.summary, kept: out.kept, reason, at: Date.now() });
  };

  /** Steps taken, inputs consumed and tokens used by the running turn, also reported when it ends early. */
  interface Progress {
    steps: number;
    consumed: number;
    tokens: number;
  }

  const run = async (
    input: TurnInput,
    ctx: TurnContext,
    progress: Progress,
    view: AnswerView,
  ): Promise<TurnResult> => {
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
        activeGoal: activeGoal(summary, working),
        live: working,
      });
    // The channel's settings as they are when the turn starts (an admin's change applies next turn),
    // the opening message's log write and, for a plain message (in the window as soon as `enter`
    // starts), the memory page: read and written together, in one round trip to the store.
    const channelP = channelSettings(ctx.conversation);
    const entering = enter(input, ctx);
    const plain = !input.files?.length && !input.context?.length;
    const opening = plain ? enterUserMessage(input, ctx.shared, limits.contextWindow) : undefined;
    const early = opening && !opening.cut ? fault(opening.text) : undefined;
    early?.catch(() => undefined); // awaited below, or superseded; never an unhandled rejection
    // The requester's messages that queued behind the opening one are answered in this same turn.
    const words = [await entering, ...(await enterQueued(ctx, progress))];
    const asked = words.join("\n");
    // The early page searched the opening's words only: queued messages need a search of their own.
    let page = early && words.length === 1 ? await early : await fault(asked);
    const channel = await channelP;
    const tools = channel.tools ? restrictTools(deps.tools, channel.tools) : deps.tools;

    const window = () => {
      const schemas = tools.schemas();
      const body = buildSystemBody({
        identity,
        page,
        activeGoal: activeGoal(summary, working),
        summary,
        channelInstructions: channel.instructions,
      });
      const pct = budgetPct({
        system: body,
        messages: working,
        tools: schemas,
        contextWindow: limits.contextWindow,
      });
      return { tools: schemas, body, pct };
    };
    const stop = async (reason: StopReason): Promise<TurnResult> => {
      const text = honestPartial(reason, done, activeGoal(summary, working));
      await append({ role: "assistant", content: text }, ctx);
      await view.say(text);
      return { status: "partial", text, ...progress };
    };

    /** Asked before each model call: 80 % is told once (Notice), 100 % ends the turn (honest partial). */
    const overBudget = async (): Promise<StopReason | undefined> => {
      const v = await deps.budget?.check(input.speaker.userKey);
      if (!v || v.kind === "ok") return undefined;
      const { scope, usedUsd, limitUsd } = v;
      const type = v.kind === "warning" ? "budget_warning" : "budget_exceeded";
      await ctx.onEvent?.({ type, scope, user: input.speaker.userKey, usedUsd, limitUsd, at: Date.now() });
      log.info({ conversation: ctx.conversation, event: type, scope, usedUsd, limitUsd }, "USD budget");
      if (v.kind === "exceeded") return { kind: "budget", why: v.text };
      await ctx.reporter.notice(v.text);
      return undefined;
    };

    for (;;) {
      if (ctx.signal.aborted) throw new CancelledError("cancelled");
      if (progress.steps >= limits.stepBudget)
        return stop({ kind: "step_budget", budget: limits.stepBudget });
      if (progress.steps > 0 && progress.steps % limits.refaultEvery === 0)
        page = await fault(`${asked}\n${narration}`);

      const spent = await overBudget();
      if (spent) return stop(spent);

      let w = window();
      if (w.pct >= limits.hardPct) {
        await compact("hard", ctx, { ...tags, purpose: "compaction" });
        w = window();
      }
      progress.steps++;
      recordStep();
      let res: Completion;
      try {
        res = await deps.llm.complete({
          role: "main",
          ...(channel.model ? { model: channel.model } : {}),
          system: withBudgetStat(w.body, w.pct),
          messages: working,
          images: await files.images(ctx.conversation, working),
          tools: w.tools,
          signal: ctx.signal,
          maxTokens: limits.maxOutputTokens,
          onText: view.sink(),
          tags,
        });
      } catch (e) {
        // The endpoint counts tokens its own way: over its window, consolidate once and ask again.
        if (!(e instanceof LlmError) || e.code !== "LLM_CONTEXT_LENGTH" || overflowed) throw e;
        overflowed = true;
        log.warn(
          { conversation: ctx.conversation, estimatedPct: w.pct, contextWindow: limits.contextWindow },
          "the model refused the request as too long; compacting and asking again (is NEO_CONTEXT_WINDOW above the model's?)",
        );
        await compact("hard", ctx, { ...tags, purpose: "compaction" });
        continue;
      }
      progress.tokens += res.usage.promptTokens + res.usage.completionTokens;
      // Text streamed with tool calls, or cut by the output limit, was not the answer.
      if (res.toolCalls.length > 0 || res.finishReason === "length") await view.dismiss();

      if (res.toolCalls.length === 0) {
        // Truncated text is never shown; the model is asked again, more compactly. The reply is
        // recorded (its start, marked) before the nudge, so the nudge follows an assistant message.
        if (res.finishReason === "length") {
          await append(cutOffReply(res.content), ctx);
          await append({ role: "user", content: LENGTH_NUDGE }, ctx);
          continue;
        }
        const text = (res.content ?? "").trim();
        if (!text) {
          // A second empty reply is not recorded: the honest partial is the assistant message.
          if (emptyNudged) return stop({ kind: "no_answer" });
          emptyNudged = true;
          await append({ role: "assistant", content: "" }, ctx);
          await append({ role: "user", content: EMPTY_NUDGE }, ctx);
          continue;
        }
        await append({ role: "assistant", content: res.content }, ctx).catch(async (err: unknown) => {
          // The log could not take it (the store went away): the answer the user may be watching
          // being written is finished all the same, never left "stopped" to be answered again.
          await view.answer(text);
          throw new AnswerShownError(err);
        });
        await view.answer(text);
        deps.memory.writeBack({
          user: input.speaker.userKey,
          conversation: ctx.conversation,
          place: ctx.place,
          transcript: [...working],
        });
        const answered: TurnResult = { status: "answered", text, ...progress };
        if (window().pct < limits.softPct) return answered;
        try {
          await compact("soft", ctx, { ...tags, purpose: "compaction" });
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
      await append(assistant, ctx);
      // Text sent with tool calls is interim narration: shown as Status, not as an answer.
      if (res.content?.trim()) {
        narration = res.content;
        await ctx.reporter.status(res.content.trim());
      }

      let outcomes: Awaited<ReturnType<typeof runToolBatch>>;
      try {
        outcomes = await runToolBatch(res.toolCalls, tools, toolCtx, ladder);
      } catch (e) {
        // Every call gets a result even when cancelled, so the transcript stays a valid request.
        for (const c of res.toolCalls) {
          await append({ role: "tool", tool_call_id: c.id, content: CANCELLED_RESULT }, ctx);
        }
        throw e;
      }
      for (const { call, result } of outcomes) {
        // Files a tool made are the user's to see: uploaded now, and the model told where they went.
        const note = result.files?.length
          ? await deliverFiles(ctx.reporter, result.files, call.function.name)
          : "";
        const msg: ToolMessage = { role: "tool", tool_call_id: call.id, content: `${result.content}${note}` };
        await append(msg, ctx);
        done.push({ name: call.function.name, ok: !result.isError });
      }
      progressCheck.after(outcomes);
      // Rung 2 counts attempts: the whole batch is one, and the model has seen every error of it.
      const exhausted = adapt.attempt(outcomes);
      if (exhausted) return stop(exhausted);

      // Cancellation point: messages that arrived meanwhile join the transcript before the next call.
      await enterQueued(ctx, progress);
    }
  };

  return {
    async chat(input, ctx) {
      if (busy) throw new AgentBusyError("a turn is already running for this conversation");
      busy = true;
      const progress: Progress = { steps: 0, consumed: 1, tokens: 0 };
      const view = createAnswerView(ctx.reporter, input.speaker.userKey, ctx.answerKey, limits.answerFile);
      const startedAt = Date.now();
      // A turn that throws (a broken contract below the loop) still ends here, as failed.
      let status: TurnResult["status"] = "failed";
      try {
        const result = await run(input, ctx, progress, view).catch(
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
        if (status !== "cancelled") await files.release(ctx.conversation, working);
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
    state: () => ({ working: [...working], summary }),
    compact: async (reason, ctx) => {
      if (working.length === 0) return;
      await compact(reason, ctx);
    },
    show: (answer, reporter, key) => showAnswer(reporter, answer, limits.answerFile, key),
  };
}
