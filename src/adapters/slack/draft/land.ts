/**
 * The finished answer over the draft messages shown so far, exactly as `say` posts it: the stream
 * stopped and its message replaced by the first part, posted parts edited, the rest posted after
 * them, messages it no longer needs removed. Every edit uses the room reserved for it.
 */
import { log } from "../../../core/log.js";
import { renderAnswer, type SlackAnswerPart } from "../answer-render.js";
import type { Reservation } from "../rate-gate.js";
import { type DraftState, removeLater } from "./context.js";
import { sameBlocks } from "./text.js";

/** The finished answer over the messages shown so far, exactly as `say` posts it. */
export async function land(d: DraftState, text: string): Promise<void> {
  const { o, stream } = d;
  const { out, channel, threadTs } = o;
  const parts = renderAnswer(text);
  const shown: Array<{ ts: string; part?: SlackAnswerPart; landing: Reservation }> = stream
    ? [{ ts: stream.ts, landing: stream.landing }]
    : d.posted;
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
  for (const extra of shown.slice(parts.length)) removeLater(o, extra.ts);
}
