/**
 * Stream mode (a reply in a thread): a native streaming message, `chat.startStream` with the text
 * so far, then `chat.appendStream` with what is new; the rooms that end it as the answer are
 * reserved before it starts. Falls back to edit mode when the workspace cannot stream.
 */
import { log } from "../../../core/log.js";
import { type DraftState, removeLater } from "./context.js";
import type { Step } from "./pacer.js";
import { streamable } from "./text.js";

/** What one streaming message shows at most (`markdown_text` is limited to 12,000 per call). */
const STREAM_MAX = 12_000;

/** Stop and remove the streaming message (a retried answer that says something else, or none). */
export async function dropStream(d: DraftState): Promise<void> {
  const { out, channel } = d.o;
  const s = d.stream;
  d.stream = null;
  if (!s) return;
  s.landing.release();
  if (s.open) await out.stopStream(channel, s.ts, { reservation: s.stopping });
  else s.stopping.release();
  removeLater(d.o, s.ts);
}

/** At most one platform call towards `latest`. */
export async function stepStream(d: DraftState): Promise<Step> {
  const { o } = d;
  const { out, channel, threadTs } = o;
  const safe = streamable(d.latest);
  if (!d.stream) {
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
      d.streaming = false;
    }
    if (ts === undefined) {
      stopping.release();
      landing.release();
      return d.streaming ? "dropped" : "wrote";
    }
    d.stream = { ts, sent: safe.slice(0, STREAM_MAX), open: true, stopping, landing };
    await o.streamed?.(ts);
    return "wrote";
  }
  if (!d.stream.open) return "idle";
  if (!safe.startsWith(d.stream.sent)) {
    await dropStream(d);
    return "wrote";
  }
  const more = safe.slice(d.stream.sent.length, STREAM_MAX);
  if (!more) return "idle";
  try {
    if (!(await out.appendStream(channel, d.stream.ts, more, { optional: true }))) return "dropped";
    d.stream.sent += more;
  } catch (err) {
    log.warn({ err, channel }, "slack: the stream took no more text; the rest shows when it is done");
    d.stream.open = false;
  }
  return "wrote";
}
