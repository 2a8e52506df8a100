/**
 * How the agent speaks. The loop never writes to a terminal or a platform directly; each adapter
 * implements this for its surface (see DESIGN.md, "The Reporter on each platform").
 */
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
}
