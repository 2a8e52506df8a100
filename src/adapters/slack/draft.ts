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
 */
import { log } from "../../core/log.js";
import type { AnswerDraft } from "../../core/reporter.js";
import { renderAnswer, type SlackAnswerPart, safeMarkdown } from "./answer-render.js";
import type { MessageMetadata } from "./outbound/messages.js";
import type { SlackOutbound } from "./outbound.js";
import type { Reservation } from "./rate-gate.js";
import type { StatusSink } from "./status.js";

/** When a draft writes. */
export interface DraftPace {
  /** From the first text to the first write (an answer finished by then is said whole). */
  firstWriteMs: number;
  /** From the end of one write to the start of the next. */
  intervalMs: number;
}

export const DEFAULT_DRAFT_PACE: DraftPace = { firstWriteMs: 150, intervalMs: 1000 };

/** What one streaming message shows at most (`markdown_text` is limited to 12,000 per call). */
const STREAM_MAX = 12_000;

export interface SlackDraftOptions {
  out: SlackOutbound;
  channel: string;
  /** The thread answers go to; "" when there is none (a DM's top level): no stream, edits. */
  threadTs: string;
  /** The requester: Slack streams to one recipient. */
  recipient: { user: string; team: string };
  pace: DraftPace;
  status: StatusSink;
  /** Metadata for part `i` of the finished answer (its key, for a resumed turn to find). */
  metadata?: (part: number) => MessageMetadata;
  /** Metadata of a draft message posted (edit mode) until it is the answer's (`unfinished.ts`). */
  draftMetadata?: MessageMetadata;
  /** The streaming message started (`unfinished.ts`: it takes no metadata). */
  streamed?(ts: string): Promise<void>;
  /** Say `text` the non-streamed way (nothing was shown yet). */
  say(text: string): Promise<void>;
}

/**
 * The part of `text` whose safe Markdown cannot change as more text arrives: up to the last
 * whitespace, or the last line break when the line being written has a backtick (a code span or
 * fence may still be closing). Appending these keeps a stream append-only.
 */
export function streamable(text: string): string {
  const t = text.replace(/\r\n?/g, "\n");
  const lineStart = t.lastIndexOf("\n") + 1;
  let cut = Math.max(t.lastIndexOf(" "), t.lastIndexOf("\n")) + 1;
  if (t.slice(lineStart, cut).includes("`")) cut = lineStart;
  return safeMarkdown(t.slice(0, cut));
}

interface Posted {
  ts: string;
  part: SlackAnswerPart;
  /** The room of the `chat.update` that makes this message its part of the answer. */
  landing: Reservation;
}

interface Stream {
  ts: string;
  /** The safe Markdown appended so far. */
  sent: string;
  /** False once appends failed (Slack ended the stream): the rest shows when the answer is complete. */
  open: boolean;
  /** The rooms of the `chat.stopStream` and the `chat.update` that end it as the answer. */
  stopping: Reservation;
  landing: Reservation;
}

/** What one write attempt did: a call made, a call the workspace had no room for, or nothing to do. */
type Step = "wrote" | "dropped" | "idle";

const sameBlocks = (a: SlackAnswerPart, b: SlackAnswerPart): boolean =>
  JSON.stringify(a.blocks ?? []) === JSON.stringify(b.blocks ?? []);

export function createSlackDraft(o: SlackDraftOptions): AnswerDraft {
  const { out, channel, threadTs } = o;
  let latest = "";
  let streaming = threadTs !== "";
  let stream: Stream | null = null;
  const posted: Posted[] = [];
  let done = false;
  let firstAt = 0;
  let lastEnd = 0;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;

  /** A message the answer no longer needs: removed when `chat.delete` has room, nobody waits. */
  const removeLater = (ts: string): void => {
    void out
      .delete(channel, ts)
      .catch((err: unknown) =>
        log.warn({ err, channel }, "slack: a stale draft message could not be removed"),
      );
  };

  /** Stop and remove the streaming message (a retried answer that says something else, or none). */
  const dropStream = async (): Promise<void> => {
    const s = stream;
    stream = null;
    if (!s) return;
    s.landing.release();
    if (s.open) await out.stopStream(channel, s.ts, { reservation: s.stopping });
    else s.stopping.release();
    removeLater(s.ts);
  };

  /** At most one platform call towards `latest`. */
  const stepStream = async (): Promise<Step> => {
    const safe = streamable(latest);
    if (!stream) {
      if (!safe.trim()) return "idle";
      const stopping = out.reserve("chat.stopStream");
      const landing = stopping && out.reserve("chat.update");
      if (!stopping || !landing) {
        stopping?.release();
        return "dropped";
      }
      let ts: string | undefined;
      try {
        ts = await out.startStream(
          {
            channel,
            thread_ts: threadTs,
            markdown_text: safe.slice(0, STREAM_MAX),
            recipient_user_id: o.recipient.user,
            recipient_team_id: o.recipient.team,
          },
          { optional: true },
        );
      } catch (err) {
        // Older workspaces and some channel types cannot stream: the answer is edited in instead.
        log.info({ err, channel }, "slack: streaming unavailable here; editing a message instead");
        streaming = false;
      }
      if (ts === undefined) {
        stopping.release();
        landing.release();
        return streaming ? "dropped" : "wrote";
      }
      stream = { ts, sent: safe.slice(0, STREAM_MAX), open: true, stopping, landing };
      await o.streamed?.(ts);
      return "wrote";
    }
    if (!stream.open) return "idle";
    if (!safe.startsWith(stream.sent)) {
      await dropStream();
      return "wrote";
    }
    const more = safe.slice(stream.sent.length, STREAM_MAX);
    if (!more) return "idle";
    try {
      if (!(await out.appendStream(channel, stream.ts, more, { optional: true }))) return "dropped";
      stream.sent += more;
    } catch (err) {
      log.warn({ err, channel }, "slack: the stream took no more text; the rest shows when it is done");
      stream.open = false;
    }
    return "wrote";
  };

  const stepEdit = async (): Promise<Step> => {
    const parts = renderAnswer(latest);
    for (const [i, part] of parts.entries()) {
      const had = posted[i];
      if (!had) {
        const landing = out.reserve("chat.update");
        if (!landing) return "dropped";
        const ts = await out
          .post(
            {
              channel,
              thread_ts: threadTs,
              ...part,
              ...(o.draftMetadata ? { metadata: o.draftMetadata } : {}),
            },
            { optional: true },
          )
          .catch((err: unknown) => {
            landing.release();
            throw err;
          });
        if (ts === undefined) {
          landing.release();
          return "dropped";
        }
        posted.push({ ts, part, landing });
        return "wrote";
      }
      if (had.part.text !== part.text || !sameBlocks(had.part, part)) {
        const sent = await out.update(
          channel,
          had.ts,
          () => ({ text: part.text, blocks: part.blocks ?? [] }),
          { optional: true },
        );
        if (!sent) return "dropped";
        had.part = part;
        return "wrote";
      }
    }
    // Parts the answer no longer has (it shrank) are removed when it is complete.
    return "idle";
  };

  const schedule = (): void => {
    if (done || timer || running) return;
    const due = Math.max(firstAt + o.pace.firstWriteMs, lastEnd + o.pace.intervalMs);
    timer = setTimeout(
      () => {
        timer = null;
        running = (streaming ? stepStream() : stepEdit())
          .catch((err: unknown): Step => {
            log.warn({ err, channel }, "slack draft write failed");
            return "dropped";
          })
          .then((step) => {
            running = null;
            // A write the workspace had no room for is tried again with the next text, a pace later.
            if (step !== "idle") lastEnd = Date.now();
            if (step === "wrote") schedule();
          });
      },
      Math.max(0, due - Date.now()),
    );
  };

  /** Stop writing: nothing pending, nothing in flight. */
  const quiesce = async (): Promise<void> => {
    done = true;
    if (timer) clearTimeout(timer);
    timer = null;
    await running;
  };

  /** The finished answer over the messages shown so far, exactly as `say` posts it. */
  const land = async (text: string): Promise<void> => {
    const parts = renderAnswer(text);
    const shown: Array<{ ts: string; part?: SlackAnswerPart; landing: Reservation }> = stream
      ? [{ ts: stream.ts, landing: stream.landing }]
      : posted;
    if (stream?.open)
      await out.stopStream(channel, stream.ts, { reservation: stream.stopping }).catch((err: unknown) =>
        // Slack may have ended it already (it times streams out); it is replaced all the same.
        log.warn({ err, channel }, "slack: chat.stopStream failed"),
      );
    else stream?.stopping.release();
    try {
      for (const [i, part] of parts.entries()) {
        const had = shown[i];
        const metadata = o.metadata?.(i);
        if (!had) {
          await out.post({ channel, thread_ts: threadTs, ...part, ...(metadata ? { metadata } : {}) });
        } else if (!had.part || had.part.text !== part.text || !sameBlocks(had.part, part) || metadata) {
          await out.update(
            channel,
            had.ts,
            () => ({ text: part.text, blocks: part.blocks ?? [], ...(metadata ? { metadata } : {}) }),
            { reservation: had.landing },
          );
        }
      }
    } finally {
      // Room reserved for messages that needed no edit, or that a failure left unedited.
      for (const s of shown) s.landing.release();
    }
    for (const extra of shown.slice(parts.length)) removeLater(extra.ts);
  };

  return {
    update(text) {
      if (done) return;
      if (firstAt === 0) firstAt = Date.now();
      latest = text;
      schedule();
    },
    async finish(text) {
      await quiesce();
      if (!stream && posted.length === 0) return o.say(text);
      const removeStatus = o.status.stop();
      try {
        await land(text);
      } finally {
        void removeStatus().catch((err: unknown) =>
          log.warn({ err, channel }, "slack status removal failed"),
        );
      }
    },
    async discard() {
      await quiesce();
      for (const p of posted.splice(0)) {
        p.landing.release();
        removeLater(p.ts);
      }
      try {
        await dropStream();
      } catch (err) {
        log.warn({ err, channel }, "slack: a draft that was not the answer could not be taken back");
      }
    },
  };
}
