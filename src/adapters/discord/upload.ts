/**
 * Files Neo sends on Discord: message attachments, the bytes as multipart parts `files[n]` beside
 * the message body in `payload_json` (discord.com/developers/docs/reference#uploading-files), which
 * discord.js's REST builds from `files`. At most 10 attachments a message, so more files make more
 * messages; the comment goes on the first, cut to the content limit.
 */
import type { RawFile } from "discord.js";
import type { OutboundFile } from "../../core/reporter.js";
import type { PacedJob } from "./coalesce.js";
import { type CreateBody, createBody } from "./render.js";
import { DISCORD_MAX_CONTENT } from "./split.js";

/** Discord's limit of attachments on one message. */
export const DISCORD_MAX_ATTACHMENTS = 10;

/** Sends one message with its files (a channel post or an interaction follow-up). */
export type PostWithFiles = (body: CreateBody, files: RawFile[]) => Promise<void>;

/** `nonce(i)` names the i-th message for good (an answer's files: posting again shows nothing new). */
export function uploadJob(
  files: readonly OutboundFile[],
  comment: string,
  post: PostWithFiles,
  nonce?: (i: number) => string,
): PacedJob {
  return async () => {
    let calls = 0;
    for (let i = 0; i < files.length; i += DISCORD_MAX_ATTACHMENTS) {
      const group = files.slice(i, i + DISCORD_MAX_ATTACHMENTS);
      const content = i === 0 ? cut(comment) : undefined;
      await post(
        createBody(
          {
            ...(content ? { content } : {}),
            attachments: group.map((f, id) => ({ id, filename: f.name })),
          },
          nonce?.(calls),
        ),
        group.map((f) => ({ name: f.name, data: Buffer.from(f.bytes), contentType: f.type })),
      );
      calls++;
    }
    return calls;
  };
}

const cut = (text: string): string =>
  text.length <= DISCORD_MAX_CONTENT ? text : `${text.slice(0, DISCORD_MAX_CONTENT - 1)}…`;
