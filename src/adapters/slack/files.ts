/**
 * Slack files on a message event, as Neo's `InboundFile`s, and where Slack serves them. The file
 * objects come with the `file_share` message (shape: @slack/types `File`; docs.slack.dev, "file_share
 * message" and "Slack Connect files"). `url_private` is fetched with the workspace's bot token, which
 * is sent only to Slack's file host (`files.slack.com`, or the configured API host for fakes and
 * proxies). A file is refused without a request when Slack says Neo cannot read it here: a Slack
 * Connect file shown only by id (`file_access: check_file_info`), a deleted one (`tombstone`), one
 * hidden by the plan's limits, or one whose URL names another workspace.
 */
import { z } from "zod";
import type { FileSource, InboundFile } from "../../core/files/types.js";

export const slackFileSchema = z.object({
  id: z.string().min(1),
  name: z.string().nullish(),
  title: z.string().nullish(),
  mimetype: z.string().nullish(),
  size: z.number().nullish(),
  url_private: z.string().nullish(),
  mode: z.string().nullish(),
  file_access: z.string().nullish(),
});
export type SlackFile = z.infer<typeof slackFileSchema>;

/** Slack's file host; `url_private` points here. */
export const SLACK_FILE_HOST = "files.slack.com";

/** Why Neo may not read `f` here, if it may not. */
function refusal(f: SlackFile, teamId: string): string | undefined {
  if (f.file_access === "check_file_info") return "Slack shares this file with me by id only (Slack Connect)";
  if (f.mode === "tombstone") return "it was deleted";
  if (f.mode === "hidden_by_limit") return "it is hidden by the workspace's plan limits";
  if (!f.url_private) return "Slack gave no address for it";
  // url_private is /files-pri/<team>-<file>/<name>: a file of another workspace is not ours to read.
  const owner = /\/files-pri\/([A-Z0-9]+)-/.exec(f.url_private)?.[1];
  if (owner && owner !== teamId) return "it belongs to another workspace";
  return undefined;
}

export function slackFilesOf(files: readonly SlackFile[], teamId: string): InboundFile[] {
  return files.map((f) => {
    const why = refusal(f, teamId);
    return {
      id: f.id,
      name: f.name ?? f.title ?? f.id,
      type: f.mimetype ?? "",
      size: f.size ?? 0,
      url: f.url_private ?? "",
      ...(why ? { refused: why } : {}),
    };
  });
}

/** Slack's file host (plus the API host when one is configured), with the workspace's bot token. */
export function slackFileSource(token: () => Promise<string>, apiUrl?: string): FileSource {
  const hosts = [SLACK_FILE_HOST, ...(apiUrl ? [new URL(apiUrl).host] : [])];
  return { hosts, headers: async () => ({ authorization: `Bearer ${await token()}` }) };
}
