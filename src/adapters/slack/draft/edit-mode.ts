/**
 * Edit mode (no thread to reply in, or the workspace refused to stream): the answer so far rendered
 * as `say` renders it, one posted message per part, each posted with the room of the `chat.update`
 * that will make it the answer reserved.
 */
import { renderAnswer } from "../answer-render.js";
import type { DraftState } from "./context.js";
import type { Step } from "./pacer.js";
import { sameBlocks } from "./text.js";

/** At most one platform call towards `latest`. */
export async function stepEdit(d: DraftState): Promise<Step> {
  const { o, posted } = d;
  const { out, channel, threadTs } = o;
  const parts = renderAnswer(d.latest);
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
      const sent = await out.update(channel, had.ts, () => ({ text: part.text, blocks: part.blocks ?? [] }), {
        optional: true,
      });
      if (!sent) return "dropped";
      had.part = part;
      return "wrote";
    }
  }
  // Parts the answer no longer has (it shrank) are removed when it is complete.
  return "idle";
}
