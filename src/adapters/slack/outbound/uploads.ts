/** File uploads into a thread (the SDK's `uploadV2`: `files.getUploadURLExternal` + complete). */
import type { OutboundFile } from "../../../core/reporter.js";
import type { OutboundContext, WebClient } from "./context.js";

export interface SlackUploads {
  /** Upload files into a thread with a comment (the SDK's `uploadV2`); throws when Slack refuses. */
  upload(channel: string, threadTs: string, files: readonly OutboundFile[], comment: string): Promise<void>;
}

export function createUploads({ client, rules, token, gated }: OutboundContext): SlackUploads {
  return {
    upload: async (channel, threadTs, files, comment) => {
      await gated("files.upload", rules.upload, async () =>
        client.files.uploadV2({
          channel_id: channel,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          // An answer's file goes without a comment: its message is said on its own.
          ...(comment ? { initial_comment: comment } : {}),
          file_uploads: files.map((f) => ({ file: Buffer.from(f.bytes), filename: f.name, title: f.name })),
          token: await token(),
        } as Parameters<WebClient["files"]["uploadV2"]>[0]),
      );
    },
  };
}
