/**
 * The write-back prompt and the transcript rendering the cheap model reads.
 */
import { isShownAnswer } from "../../core/agent/notes.js";
import { cortexOwner, type UserKey } from "../../core/keys.js";
import type { Message } from "../../core/llm/types.js";

export const WRITEBACK_PROMPT = `You maintain the long-term memory of Neo, a chat assistant. You read one user's part of one or
more conversations (their own messages and Neo's work for them; other people in a shared thread are
left out) and decide what, if anything, is worth remembering for FUTURE conversations with this same
user.

Each conversation is its own section, headed "### CONVERSATION n ###". In each, only "THE TURN TO
CONSOLIDATE" is new; earlier messages are context you have already seen. Extract learnings from those
turns only. "OPEN GOAL ON RECORD", when present, is the goal the user was already pursuing there.

Answer with ONE JSON object and nothing else: an entry per conversation that taught something durable,
numbered as its section (leave out conversations with nothing durable):
{"conversations": [
  {
    "conversation": 1,
    "facts": ["..."],
    "user_facts": ["..."],
    "patterns": [{"name": "...", "trigger": "...", "preconditions": ["..."], "steps": ["..."], "gotchas": ["..."], "success_criteria": ["..."]}],
    "outcome": {"summary": "...", "status": "success" | "failure" | "partial"} or null,
    "constraints": ["..."],
    "goal": {"statement": "...", "status": "active" | "done" | "abandoned"} or null,
    "remember_everywhere": false
  }
]}

What goes where:
- facts: objective, durable truths about the user's environment, systems, repositories or domain.
  Not chit-chat, not things true only for this moment, not the assistant's own opinions.
- user_facts: durable truths about the person who spoke in the turn (their name, role, preferences,
  how they like answers). Only about that person, never about other people in the thread.
- patterns: reusable how-to recipes that were actually carried out (name, when to use it, preconditions,
  the steps, gotchas met, how to tell it worked).
- outcome: only if a concrete task was completed or failed in those turns; otherwise null.
- constraints: standing rules the user explicitly set for you, to hold in every future conversation
  ("never spend more than 5 USDC without asking", "always use the testnet"). Only rules the user
  stated as lasting, in their own words; never a one-off instruction for this turn.
- goal: {"status": "active"} with the goal when the user started a task that spans several turns and
  is not finished; {"status": "done"} or {"status": "abandoned"} with the open goal on record when
  the turns finished it or the user dropped it; otherwise null.
- remember_everywhere: true only when the user explicitly asked in that conversation's turns that it
  be remembered everywhere (in every channel, also public ones), e.g. "remember this everywhere".
  Otherwise false: what the user says is remembered only for places at least as private as that one.

Rules:
- Keep each learning in the entry of the conversation it came from; never combine what was said in
  different conversations into one item (they may be seen by different people).
- Be very selective. Most turns contain nothing durable; then answer {"conversations": []}.
- Copy identifiers (addresses, ids, hashes, file paths, URLs, amounts) exactly, character for character.
- Write each fact as one short, self-contained sentence that makes sense without the conversation.
- At most 5 facts, 5 user_facts, 3 patterns, 3 constraints per conversation.`;

/** Budgets per conversation section (a batch holds at most the queue depth of turns, so of sections). */
const CONTEXT_CHARS = 8_000;
const TURN_CHARS = 16_000;
const TOOL_RESULT_CHARS = 1_500;

function line(m: Message): string {
  switch (m.role) {
    case "user":
      return `USER: ${m.content}`;
    case "assistant": {
      const calls = (m.tool_calls ?? []).map((c) => `TOOL CALL ${c.function.name}(${c.function.arguments})`);
      return [m.content ? `NEO: ${m.content}` : "", ...calls].filter(Boolean).join("\n");
    }
    case "tool": {
      const cut = m.content.length > TOOL_RESULT_CHARS;
      return `TOOL RESULT: ${m.content.slice(0, TOOL_RESULT_CHARS)}${cut ? " …[truncated]" : ""}`;
    }
  }
}

/** A turn ends with the answer the user was shown (an empty or cut-off reply is nudged, not an end). */
const isAnswer = (m: Message | undefined): boolean => isShownAnswer(m);

/** Index where the last turn starts: just after the previous turn's final answer. */
export function lastTurnStart(transcript: readonly Message[]): number {
  let i = transcript.length - 1;
  // Skip the last turn's own final answer, then walk back to the previous one.
  while (i >= 0 && isAnswer(transcript[i])) i--;
  for (; i >= 0; i--) if (isAnswer(transcript[i])) return i + 1;
  return 0;
}

function tail(text: string, max: number): string {
  return text.length > max ? `…[earlier part cut]\n${text.slice(text.length - max)}` : text;
}

/**
 * The part of a transcript that is `requester`'s: their own messages and what Neo did and answered
 * for them (everything after one of their messages, up to the next person's). Other people's
 * messages, Neo's work for them, and user messages no one said (the loop's notes, earlier thread
 * messages brought along as context) are left out: they never enter the requester's cortex.
 * `ownTurn`: the messages are the requester's running turn, so Neo's work before any person's
 * message (a compaction kept only the tail of a long turn) is theirs too.
 */
export function requesterPart(messages: readonly Message[], requester: UserKey, ownTurn = false): Message[] {
  const owner = cortexOwner(requester);
  const out: Message[] = [];
  let theirs = ownTurn;
  for (const m of messages) {
    if (m.role === "user") {
      if (!m.speaker) continue;
      theirs = cortexOwner(m.speaker.userKey) === owner;
    }
    if (theirs) out.push(m);
  }
  return out;
}

/** One conversation's part of a write-back: its queued turns, oldest first, and its open goal. */
export interface WritebackSection {
  /** Each queued turn's transcript as it was when the turn ended. */
  snapshots: readonly (readonly Message[])[];
  /** The open goal on record where the conversation runs ("" = none). */
  openGoal: string;
}

/**
 * What the cheap model reads: a section per conversation (numbered from 1, as the answer's entries
 * are), each with its open goal on record, earlier context, then the turns to consolidate, all of it
 * only the requester's part. A conversation's several queued turns are each snapshot's own last
 * turn, in order, with the context from before the first of them.
 */
export function renderForWriteback(sections: readonly WritebackSection[], requester: UserKey): string {
  return sections.map((s, i) => `### CONVERSATION ${i + 1} ###\n${renderSection(s, requester)}`).join("\n\n");
}

function renderSection({ snapshots, openGoal }: WritebackSection, requester: UserKey): string {
  const first = snapshots[0] ?? [];
  const context = requesterPart(first.slice(0, lastTurnStart(first)), requester)
    .map(line)
    .join("\n");
  const turns = snapshots.map((t) =>
    requesterPart(t.slice(lastTurnStart(t)), requester, true)
      .map(line)
      .join("\n"),
  );
  const parts = [];
  if (openGoal) parts.push(`=== OPEN GOAL ON RECORD ===\n${openGoal}`);
  if (context)
    parts.push(`=== EARLIER IN THE CONVERSATION (context only) ===\n${tail(context, CONTEXT_CHARS)}`);
  const header =
    turns.length > 1
      ? `THE TURN TO CONSOLIDATE (${turns.length} turns since the last write-back, in order)`
      : "THE TURN TO CONSOLIDATE";
  parts.push(`=== ${header} ===\n${tail(turns.join("\n"), TURN_CHARS)}`);
  return parts.join("\n\n");
}

/** The last completed exchange of `requester`: their messages of the turn and Neo's final answer. */
export function lastExchange(
  transcript: readonly Message[],
  requester: UserKey,
): { user: string; assistant: string } | undefined {
  const final = transcript.at(-1);
  if (final?.role !== "assistant" || !isAnswer(final) || !final.content?.trim()) return undefined;
  const part = requesterPart(transcript.slice(lastTurnStart(transcript)), requester, true);
  // The answer was to someone else (or to no one's words): nothing of the requester's to keep.
  if (part.at(-1) !== final) return undefined;
  const user = part
    .flatMap((m) => (m.role === "user" ? [m.content] : []))
    .join("\n")
    .trim();
  return user ? { user, assistant: final.content.trim() } : undefined;
}
