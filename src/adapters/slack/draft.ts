/**
 * A Slack answer shown while the model writes it. Two ways to show it, one outcome:
 * - stream (a reply in a thread): a native streaming message, `chat.startStream` with the text so
 *   far, then `chat.appendStream` with what is new, at most one call per interval (Slack renders it
 *   as Markdown, made safe as a markdown block is);
 * - edit (no thread to reply in, or the workspace refused to stream): the answer so far rendered as
 *   `say` renders it, one posted message per part, brought up to date one call per interval.
 * When the answer is complete the messages hold exactly `renderAnswer(final)`, what `say` would have
 * posted: the stream is stopped and its message replaced by the first part, the other parts are
 * posted after it (edited, or removed, in edit mode). An answer complete before the first write is
 * due is said whole: one call instead of three.
 *
 * Only the answer is owed; the draft is cosmetic and gives way in a busy workspace (rate-gate.ts):
 * a draft message is shown only with the room of the calls that will make it the answer reserved
 * (`chat.update`, and `chat.stopStream` for a stream), so the answer never waits for a Tier 3 window;
 * its writes in between are optional (dropped when the method has no room now, tried again with the
 * next text). A draft that never got room says the answer whole at the end (`chat.postMessage`,
 * which is per channel, not Tier 3). Messages it no longer needs are deleted without the answer
 * waiting for `chat.delete`.
 *
 * The pieces, in draft/: the pacing (pacer.ts), stream mode (stream-mode.ts), edit mode
 * (edit-mode.ts), the finished answer over what was shown (land.ts), pure text helpers (text.ts)
 * and the state they share (context.ts).
 */
import { log } from "../../core/log.js";
import type { AnswerDraft } from "../../core/reporter.js";
import { type DraftState, removeLater, type SlackDraftOptions } from "./draft/context.js";
import { stepEdit } from "./draft/edit-mode.js";
import { land } from "./draft/land.js";
import { createDraftPacer } from "./draft/pacer.js";
import { dropStream, stepStream } from "./draft/stream-mode.js";

export function createSlackDraft(o: SlackDraftOptions): AnswerDraft {
  const { channel } = o;
  const d: DraftState = { o, latest: "", streaming: o.threadTs !== "", stream: null, posted: [] };
  const pacer = createDraftPacer(o.pace, channel, () => (d.streaming ? stepStream(d) : stepEdit(d)));

  return {
    update(text) {
      if (pacer.done) return;
      d.latest = text;
      pacer.nudge();
    },
    async finish(text) {
      await pacer.quiesce();
      if (!d.stream && d.posted.length === 0) return o.say(text);
      const removeStatus = o.status.stop();
      try {
        await land(d, text);
      } finally {
        void removeStatus().catch((err: unknown) =>
          log.warn({ err, channel }, "slack status removal failed"),
        );
      }
    },
    answerSoon() {
      // Nothing shown yet: `finish` posts the answer whole (`say`).
      if (!d.stream && d.posted.length === 0) o.answerSoon?.();
    },
    async discard() {
      await pacer.quiesce();
      for (const p of d.posted.splice(0)) {
        p.landing.release();
        removeLater(o, p.ts);
      }
      try {
        await dropStream(d);
      } catch (err) {
        log.warn({ err, channel }, "slack: a draft that was not the answer could not be taken back");
      }
    },
  };
}
