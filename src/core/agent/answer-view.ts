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
 * - Where the reporter uploads files, an answer `answerFile` sends as a file is uploaded first and
 *   the message beside it is said (or the draft finished with it); a draft stops growing once the
 *   answer is past the message length (it will not be read there). A failed upload says the whole
 *   answer as text, with a note.
 */

import { inSpan } from "../../ops/tracing/spans.js";
import type { UserKey } from "../keys.js";
import type { TextSink } from "../llm/types.js";
import { log } from "../log.js";
import type { AnswerDraft, AnswerKey, Reporter } from "../reporter.js";
import {
  type AnswerFileLimits,
  answerFile,
  beyondMessageLength,
  DEFAULT_ANSWER_FILE_LIMITS,
  UPLOAD_FAILED_NOTE,
} from "./answer-file.js";

/** Appended to a draft that the model never finished (its stream broke for good). */
export const INTERRUPTED_MARK = "*(interrupted)*";
/** Appended to a draft whose turn was cancelled while it was written. */
export const STOPPED_MARK = "*(stopped)*";
/** Status while a broken stream is asked again. */
export const RETRYING_STATUS = "The answer broke off; asking the model again…";

export interface AnswerView {
  /** The sink for the next model call. */
  sink(): TextSink;
  /** The last response is the answer, being logged: `answer` comes next (`Reporter.answerSoon`). */
  answerSoon(): void;
  /** The last response was the answer: show exactly `text`, finished. */
  answer(text: string): Promise<void>;
  /** The last response was not an answer: take back whatever of it was shown. */
  dismiss(): Promise<void>;
  /** Say something other than the streamed answer (a partial, a failure, a refusal). */
  say(text: string): Promise<void>;
  /** The turn is over: a draft still open is finished with what it showed, marked stopped. */
  close(): Promise<void>;
}

export function createAnswerView(
  reporter: Reporter,
  requester: UserKey,
  key?: AnswerKey,
  fileLimits: AnswerFileLimits = DEFAULT_ANSWER_FILE_LIMITS,
): AnswerView {
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
          if (reporter.upload && beyondMessageLength(now, fileLimits)) return;
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
    answerSoon: () => {
      if (draft) draft.answerSoon?.();
      else reporter.answerSoon?.();
    },
    answer: (final) =>
      inSpan("neo.post", { attributes: { "neo.post.streamed": draft !== null } }, async () => {
        const d = draft;
        reset();
        if (d) await d.finish(await asFile(reporter, final, fileLimits, key));
        else await showAnswer(reporter, final, fileLimits, key);
      }),
    async dismiss() {
      const d = draft;
      reset();
      if (d) await d.discard();
    },
    say: (message) =>
      inSpan("neo.post", { attributes: { "neo.post.streamed": false } }, async () => {
        if (!draft) return reporter.say(message, key);
        // The answer key names the answer the draft was showing; this message is another one.
        await finishWith(INTERRUPTED_MARK);
        await reporter.say(message);
      }),
    close: () => finishWith(STOPPED_MARK),
  };
}

/**
 * Show a finished answer no draft shows: its files uploaded, then the message beside them said. Also
 * how a turn resumed after a crash posts the answer its log holds: the same files and message under
 * the same key as the first time, so the adapter can tell what of them is there already.
 */
export async function showAnswer(
  reporter: Reporter,
  final: string,
  limits: AnswerFileLimits = DEFAULT_ANSWER_FILE_LIMITS,
  key?: AnswerKey,
): Promise<void> {
  await reporter.say(await asFile(reporter, final, limits, key), key);
}

/** Upload what `answerFile` sends as files; the text to say beside them (or all of it, on failure). */
async function asFile(
  reporter: Reporter,
  final: string,
  limits: AnswerFileLimits,
  key?: AnswerKey,
): Promise<string> {
  const plan = reporter.upload ? answerFile(final, limits) : null;
  if (!plan || !reporter.upload) return final;
  try {
    await reporter.upload(plan.files, "", key);
    return plan.message;
  } catch (err) {
    log.warn({ err, files: plan.files.map((f) => f.name) }, "answer upload failed; said as text");
    return `${final}\n\n${UPLOAD_FAILED_NOTE}`;
  }
}
