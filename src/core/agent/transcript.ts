/**
 * A conversation's state: the working transcript and the consolidated summary, nothing else. Every
 * appended message and every compaction goes through `ctx.onEvent` first, so the events replay to it.
 */
import { COMPACTION_NOTICE, type CompactionReason, compactWindow } from "../compaction/compact.js";
import type { Message, UsageTags } from "../llm/types.js";
import type { AgentDeps } from "./deps.js";
import type { AgentState, TurnContext } from "./types.js";

export interface Transcript {
  /** Replaced (not edited) by a compaction: read it afresh, never keep it across one. */
  readonly working: Message[];
  readonly summary: string | null;
  append(m: Message, ctx: TurnContext): Promise<void>;
  /** Consolidates the window into the summary (the user told why first). */
  compact(reason: CompactionReason, ctx: TurnContext, tags?: UsageTags): Promise<void>;
  /** A copy (what the events replay to). */
  state(): AgentState;
}

export function createTranscript(deps: Pick<AgentDeps, "llm" | "limits">, initial?: AgentState): Transcript {
  const { limits } = deps;
  let working: Message[] = [...(initial?.working ?? [])];
  let summary: string | null = initial?.summary ?? null;

  const append = async (m: Message, ctx: TurnContext) => {
    working.push(m);
    await ctx.onEvent?.({ type: "message", message: m, at: Date.now() });
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

  return {
    get working() {
      return working;
    },
    get summary() {
      return summary;
    },
    append,
    compact,
    state: () => ({ working: [...working], summary }),
  };
}
