/**
 * A Discord answer shown while the model writes it: the text so far is split exactly as `say`
 * splits it (2,000 characters, paragraph and code-fence boundaries) and the messages posted so far
 * are brought up to date by one paced job per channel (the pacer keeps the channel at most one
 * update per interval and merges everything in between). The message being written carries the
 * Stop button; the finished answer carries none, and its messages hold exactly `splitMessage(final)`.
 * The first write waits `firstWriteMs` after the first text: an answer finished by then is posted
 * once, whole (a partial posted sooner costs an edit, and the paced edit shows the finished answer
 * no sooner than one interval after it).
 */
import type { AnswerDraft } from "../../core/reporter.js";
import type { Pacer } from "./coalesce.js";
import { splitMessage } from "./split.js";
import type { StopRow } from "./stop-button.js";

/** From the first text to the first write. */
export const DRAFT_FIRST_WRITE_MS = 500;

/** Where the draft's messages live (a channel, or an interaction's follow-ups). */
export interface DraftTarget {
  /** Post a new message; resolves with its id. */
  post(content: string, components: StopRow[]): Promise<string>;
  edit(id: string, content: string, components: StopRow[]): Promise<void>;
  remove(id: string): Promise<void>;
}

export interface DiscordDraftOptions {
  target: DraftTarget;
  pacer: Pacer;
  /** The pacer key: the channel the messages are in. */
  channelId: string;
  /** The Stop button row shown on the message being written (none when the turn cannot be stopped). */
  stopRow?: StopRow;
  /** From the first text to the first write (default `DRAFT_FIRST_WRITE_MS`). */
  firstWriteMs?: number;
  /** Text is about to appear for the first time (stop typing). */
  onFirstText(): void;
  /** The draft is over: `finished` (the answer landed: remove the status line) or taken back (work goes on). */
  onEnd(finished: boolean): Promise<void>;
}

interface Shown {
  id: string;
  content: string;
  stoppable: boolean;
}

export function createDiscordDraft(o: DiscordDraftOptions): AnswerDraft {
  const shown: Shown[] = [];
  let latest = "";
  let done = false;
  let started = false;
  /** The first write, until it is due. */
  let firstWrite: NodeJS.Timeout | null = null;
  /** Taken back: no paced turn may write again. */
  let discarded = false;

  /**
   * Bring the posted messages up to `latest` with at most `limit` platform calls; the last message
   * is stoppable while the draft runs. Resolves with the calls made.
   */
  const sync = async (limit = Number.POSITIVE_INFINITY): Promise<number> => {
    const chunks = splitMessage(latest);
    const stopAt = done || !o.stopRow ? -1 : chunks.length - 1;
    let calls = 0;
    for (const [i, content] of chunks.entries()) {
      if (calls >= limit) return calls;
      const stoppable = i === stopAt;
      const components = stoppable && o.stopRow ? [o.stopRow] : [];
      const had = shown[i];
      if (!had) {
        shown.push({ id: await o.target.post(content, components), content, stoppable });
        calls++;
      } else if (had.content !== content || had.stoppable !== stoppable) {
        await o.target.edit(had.id, content, components);
        had.content = content;
        had.stoppable = stoppable;
        calls++;
      }
    }
    // The text got shorter (a retried answer said less): what it no longer needs goes.
    while (shown.length > chunks.length && calls < limit) {
      await o.target.remove(shown.pop()!.id);
      calls++;
    }
    return calls;
  };

  const inSync = (): boolean => {
    const chunks = splitMessage(latest);
    const stopAt = done || !o.stopRow ? -1 : chunks.length - 1;
    return (
      chunks.length === shown.length &&
      chunks.every((c, i) => shown[i]!.content === c && shown[i]!.stoppable === (i === stopAt))
    );
  };

  /**
   * One platform call per paced turn, the rest in the next: a turn that wrote two messages at once
   * (an edit and the next part) put five writes in a 5 s window; one at a time keeps it at four.
   */
  const step = async (): Promise<number> => {
    if (discarded) return 0;
    const calls = await sync(1);
    if (calls > 0 && !inSync()) push();
    return calls;
  };

  const push = (): void => o.pacer.push(o.channelId, step);

  const holdNoMore = (): void => {
    if (firstWrite) clearTimeout(firstWrite);
    firstWrite = null;
  };

  return {
    update(text) {
      if (done) return;
      latest = text;
      if (!started) {
        started = true;
        o.onFirstText();
        firstWrite = setTimeout(() => {
          firstWrite = null;
          push();
        }, o.firstWriteMs ?? DRAFT_FIRST_WRITE_MS);
        firstWrite.unref();
        return;
      }
      if (!firstWrite) push();
    },
    async finish(text) {
      done = true;
      latest = text;
      holdNoMore();
      push();
      try {
        await o.pacer.settle(o.channelId);
        // A paced job that failed only logged; the finished answer must land or the turn hears of it.
        if (!inSync()) await sync();
      } finally {
        // The next answer in this channel waits for the window's room, not for this one's cadence.
        o.pacer.rest(o.channelId);
        await o.onEnd(true);
      }
    },
    async discard() {
      done = true;
      discarded = true;
      holdNoMore();
      await o.pacer.cancel(o.channelId);
      for (const s of shown.splice(0)) await o.target.remove(s.id);
      await o.onEnd(false);
    },
  };
}
