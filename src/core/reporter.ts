/**
 * How the agent speaks. The loop never writes to a terminal or a platform directly; each adapter
 * implements this for its surface (see DESIGN.md, "The Reporter on each platform").
 */
export interface Reporter {
  /**
   * The user-facing answer or narration. Posted as a new message (it notifies). `key` names this
   * answer for good (its turn's opening message id): where the platform can, a second post with the
   * same key (a resumed turn posting a logged answer again after a crash) shows nothing new.
   */
  say(text: string, key?: string): Promise<void>;
  /** Ephemeral progress ("• fs__read_file"). Coalesced by the adapter, removed when the answer lands. */
  status(text: string): Promise<void>;
  /** A deliberate visible promise (compaction, escalation, interruption). */
  notice(text: string): Promise<void>;
}
