/**
 * What the user sees of a turn's answer while the model writes it: the policy the core owns for
 * every adapter (DESIGN.md, "The Reporter on each platform").
 *
 * - A reporter without `draft` gets the answer whole, through `say`, when it is done.
 * - A draft opens at the first visible text of a response; if the response turns out not to be the
 *   answer (tool calls, cut by the output limit) the draft is taken back.
 * - A stream that breaks is asked again by the client: the retry's text replaces the draft only
 *   where it says something new, so text the user already saw is never shown twice; the user is
 *   told (Status) that the answer is being asked again.
 * - A turn that ends with a draft still open (the retries failed, the user stopped it) finishes it
 *   with what was shown, marked, before anything else is said: one honest message, never two answers.
 */

import type { UserKey } from "../keys.js";
import type { TextSink } from "../llm/types.js";
import { log } from "../log.js";
import type { AnswerDraft, AnswerKey, Reporter } from "../reporter.js";

/** Appended to a draft that the model never finished (its stream broke for good). */
export const INTERRUPTED_MARK = "*(interrupted)*";
/** Appended to a draft whose turn was cancelled while it was written. */
export const STOPPED_MARK = "*(stopped)*";
/** Status while a broken stream is asked again. */
export const RETRYING_STATUS = "The answer broke off; asking the model again…";

export interface AnswerView {
  /** The sink for the next model call. */
  sink(): TextSink;
  /** The last response was the answer: show exactly `text`, finished. */
  answer(text: string): Promise<void>;
  /** The last response was not an answer: take back whatever of it was shown. */
  dismiss(): Promise<void>;
  /** Say something other than the streamed answer (a partial, a failure, a refusal). */
  say(text: string): Promise<void>;
  /** The turn is over: a draft still open is finished with what it showed, marked stopped. */
  close(): Promise<void>;
}

export function createAnswerView(reporter: Reporter, requester: UserKey, key?: AnswerKey): AnswerView {
  let draft: AnswerDraft | null = null;
  /** What the draft was last given (the answer so far, as shown). */
  let shown = "";
  /** This attempt's text so far. */
  let text = "";
  /** After a restart: the retry's text is not shown while it only repeats what is there. */
  let replaying = false;

  const reset = () => {
    draft = null;
    shown = "";
    text = "";
    replaying = false;
  };

  const finishWith = async (mark: string): Promise<void> => {
    const d = draft;
    const body = shown.trim();
    reset();
    if (d) await d.finish(`${body}\n\n${mark}`);
  };

  return {
    sink: () => {
      text = "";
      return {
        text(delta) {
          text += delta;
          const now = text.trimStart();
          if (!now.trim() || !reporter.draft) return;
          if (replaying) {
            if (shown.startsWith(now)) return;
            replaying = false;
          }
          draft ??= reporter.draft({ requester, ...(key ? { key } : {}) });
          shown = now;
          draft.update(now);
        },
        restart() {
          text = "";
          replaying = draft !== null;
          reporter.status(RETRYING_STATUS).catch((err: unknown) => log.warn({ err }, "retry status failed"));
        },
      };
    },
    async answer(final) {
      const d = draft;
      reset();
      if (d) await d.finish(final);
      else await reporter.say(final, key);
    },
    async dismiss() {
      const d = draft;
      reset();
      if (d) await d.discard();
    },
    async say(message) {
      if (!draft) return reporter.say(message, key);
      // The answer key names the answer the draft was showing; this message is another one.
      await finishWith(INTERRUPTED_MARK);
      await reporter.say(message);
    },
    close: () => finishWith(STOPPED_MARK),
  };
}
