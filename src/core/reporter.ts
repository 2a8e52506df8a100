/**
 * How the agent speaks. The loop never writes to a terminal or a platform directly; each adapter
 * implements this for its surface (see DESIGN.md, "The Reporter on each platform").
 *
 * Required: `say`, `status`, `notice`. Optional capability: `draft`, an answer shown while the model
 * writes it. What happens without it (the answer is said whole when it is done), when a response
 * turns out not to be the answer, and when a stream breaks, is decided once, in the core
 * (`agent/answer-view.ts`), not by each adapter.
 */
import type { UserKey } from "./keys.js";

/** Names a turn's answer across processes. */
export interface AnswerKey {
  /** The turn's opening message id. */
  id: string;
  /**
   * The answer may already be posted, in part or whole: a turn resumed after the process died
   * between posting it and closing the turn. Only what is not there yet is posted.
   */
  resumed?: true;
}

/** Who a draft is written for (platforms that stream to one recipient need to know). */
export interface DraftOptions {
  key?: AnswerKey;
  /** The turn's requester. */
  requester: UserKey;
}

/**
 * One answer being shown as the model writes it. `update` returns at once; the adapter merges
 * updates into as few platform calls as its limits allow. The final text of `finish` is rendered
 * exactly as `say` would render it.
 */
export interface AnswerDraft {
  /**
   * The answer so far, whole (not a delta). Usually it extends the previous text; when it does not
   * (a retried stream that said something else), what was shown is replaced where the platform allows.
   */
  update(text: string): void;
  /** The answer is complete: show exactly `text` (rendered as `say` renders it) and end the draft. */
  finish(text: string): Promise<void>;
  /** The response was not an answer (tool calls, cut by the output limit): take back what was shown. */
  discard(): Promise<void>;
  /** Optional: the answer is complete and being logged; `finish` comes next (see `Reporter.answerSoon`). */
  answerSoon?(): void;
}

/** A file Neo sends (an image a tool made, a long answer): bytes in memory, never logged. */
export interface OutboundFile {
  name: string;
  /** MIME type. */
  type: string;
  bytes: Uint8Array;
}

export interface Reporter {
  /**
   * The user-facing answer or narration. Posted as a new message (it notifies). `key` names this
   * answer for good, so that posting it again after a crash shows nothing new (see `AnswerKey`).
   */
  say(text: string, key?: AnswerKey): Promise<void>;
  /** Ephemeral progress ("• fs__read_file"). Coalesced by the adapter, removed when the answer lands. */
  status(text: string): Promise<void>;
  /** A deliberate visible promise (compaction, escalation, interruption). */
  notice(text: string): Promise<void>;
  /**
   * Optional: upload files into the conversation with a short message. Throws when the platform
   * refused them (the caller says so in text instead). `key` (an answer's files) makes a second
   * upload of the same answer show nothing new where the platform allows it (Discord nonces).
   */
  upload?(files: readonly OutboundFile[], comment: string, key?: AnswerKey): Promise<void>;
  /** Optional: start showing an answer while it is written (one draft at a time per reporter). */
  draft?(options: DraftOptions): AnswerDraft;
  /**
   * Optional: an answer is complete and being logged; `say` comes next, once the log has it. What
   * saying it needs of the platform (room in the channel's post rate) may be asked for now, beside
   * that write. A hint: nothing is shown.
   */
  answerSoon?(): void;
  /**
   * Optional, where drafts are shown: the process that ran the turn answering as `key` died while
   * it wrote the answer. Remove what it showed of a draft it never finished (still streaming, half
   * written), so the resumed turn's answer is the only one. Parts of the answer that were finished
   * stay (a resumed `say` skips them). Called once, before the resumed turn goes on.
   */
  dropUnfinished?(key: AnswerKey): Promise<void>;
}
