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
 */
import { log } from "../../core/log.js";
import type { AnswerDraft } from "../../core/reporter.js";
import { renderAnswer, type SlackAnswerPart, safeMarkdown } from "./answer-render.js";
import type { MessageMetadata, SlackOutbound } from "./outbound.js";
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
}

interface Stream {
  ts: string;
  /** The safe Markdown appended so far. */
  sent: string;
  /** False once appends failed (Slack ended the stream): the rest shows when the answer is complete. */
  open: boolean;
}

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

  /** Stop and remove the streaming message (a retried answer that says something else, or none). */
  const dropStream = async (): Promise<void> => {
    const s = stream;
    stream = null;
    if (!s) return;
    if (s.open) await out.stopStream(channel, s.ts);
    await out.delete(channel, s.ts);
  };

  /** At most one platform call towards `latest`; resolves true when it made one. */
  const stepStream = async (): Promise<boolean> => {
    const safe = streamable(latest);
    if (!stream) {
      if (!safe.trim()) return false;
      try {
        const ts = await out.startStream({
          channel,
          thread_ts: threadTs,
          markdown_text: safe.slice(0, STREAM_MAX),
          recipient_user_id: o.recipient.user,
          recipient_team_id: o.recipient.team,
        });
        stream = { ts, sent: safe.slice(0, STREAM_MAX), open: true };
      } catch (err) {
        // Older workspaces and some channel types cannot stream: the answer is edited in instead.
        log.info({ err, channel }, "slack: streaming unavailable here; editing a message instead");
        streaming = false;
      }
      return true;
    }
    if (!stream.open) return false;
    if (!safe.startsWith(stream.sent)) {
      await dropStream();
      return true;
    }
    const more = safe.slice(stream.sent.length, STREAM_MAX);
    if (!more) return false;
    try {
      await out.appendStream(channel, stream.ts, more);
      stream.sent += more;
    } catch (err) {
      log.warn({ err, channel }, "slack: the stream took no more text; the rest shows when it is done");
      stream.open = false;
    }
    return true;
  };

  const stepEdit = async (): Promise<boolean> => {
    const parts = renderAnswer(latest);
    for (const [i, part] of parts.entries()) {
      const had = posted[i];
      if (!had) {
        const ts = await out.post({ channel, thread_ts: threadTs, ...part });
        if (ts) posted.push({ ts, part });
        return true;
      }
      if (had.part.text !== part.text || !sameBlocks(had.part, part)) {
        await out.update(channel, had.ts, () => ({ text: part.text, blocks: part.blocks ?? [] }));
        had.part = part;
        return true;
      }
    }
    const extra = posted.pop();
    if (extra && posted.length >= parts.length) {
      await out.delete(channel, extra.ts);
      return true;
    }
    if (extra) posted.push(extra);
    return false;
  };

  const schedule = (): void => {
    if (done || timer || running) return;
    const due = Math.max(firstAt + o.pace.firstWriteMs, lastEnd + o.pace.intervalMs);
    timer = setTimeout(
      () => {
        timer = null;
        running = (streaming ? stepStream() : stepEdit())
          .then((wrote) => {
            if (wrote) lastEnd = Date.now();
            return wrote;
          })
          .catch((err: unknown) => {
            log.warn({ err, channel }, "slack draft write failed");
            lastEnd = Date.now();
            return false;
          })
          .then((wrote) => {
            running = null;
            if (wrote) schedule();
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
    const shown: Array<{ ts: string; part?: SlackAnswerPart }> = stream ? [{ ts: stream.ts }] : posted;
    if (stream?.open)
      await out.stopStream(channel, stream.ts).catch((err: unknown) =>
        // Slack may have ended it already (it times streams out); it is replaced all the same.
        log.warn({ err, channel }, "slack: chat.stopStream failed"),
      );
    for (const [i, part] of parts.entries()) {
      const had = shown[i];
      const metadata = o.metadata?.(i);
      if (!had) {
        await out.post({ channel, thread_ts: threadTs, ...part, ...(metadata ? { metadata } : {}) });
      } else if (!had.part || had.part.text !== part.text || !sameBlocks(had.part, part) || metadata) {
        await out.update(channel, had.ts, () => ({
          text: part.text,
          blocks: part.blocks ?? [],
          ...(metadata ? { metadata } : {}),
        }));
      }
    }
    for (const extra of shown.slice(parts.length)) await out.delete(channel, extra.ts);
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
      try {
        await dropStream();
        for (const p of posted.splice(0)) await out.delete(channel, p.ts);
      } catch (err) {
        log.warn({ err, channel }, "slack: a draft that was not the answer could not be taken back");
      }
    },
  };
}
