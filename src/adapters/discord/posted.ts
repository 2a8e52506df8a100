/**
 * What of a resumed answer is in the channel already. A turn resumed after a crash posts its answer
 * again; nonces (`enforce_nonce`) return the first message only when the same nonce is sent again
 * within a few minutes, and an answer written as a draft was posted with fresh nonces. So a resumed
 * answer looks first: Neo's messages after the turn's opening message (GET /channels/{id}/messages
 * `after`), their text and their attachments' names, and posts only what is not among them.
 */
import { type REST, Routes } from "discord.js";
import { z } from "zod";

/** Messages read after the opening one: an answer is a few messages and its files. */
const LOOK_LIMIT = 100;

const postedSchema = z.array(
  z.object({
    author: z.object({ id: z.string() }),
    content: z.string().default(""),
    attachments: z.array(z.object({ filename: z.string() })).default([]),
  }),
);

/** What Neo posted after a message: one entry per message text, one per attached file. */
export interface Posted {
  texts: string[];
  files: string[];
}

export async function postedAfter(
  rest: REST,
  channelId: string,
  openingId: string,
  neoId: string,
): Promise<Posted> {
  const raw = await rest.get(Routes.channelMessages(channelId), {
    query: new URLSearchParams({ after: openingId, limit: String(LOOK_LIMIT) }),
  });
  const mine = postedSchema.parse(raw).filter((m) => m.author.id === neoId);
  return {
    texts: mine.map((m) => m.content).filter((t) => t !== ""),
    files: mine.flatMap((m) => m.attachments.map((a) => a.filename)),
  };
}

/** Of `wanted`, those not in `there` (each item of `there` answers for one wanted item). */
export function notAmong<T>(wanted: readonly T[], there: readonly string[], name: (t: T) => string): T[] {
  const left = [...there];
  return wanted.filter((w) => {
    const i = left.indexOf(name(w));
    if (i >= 0) left.splice(i, 1);
    return i < 0;
  });
}
