/**
 * Discord attachments as Neo's `InboundFile`s, and where Discord serves them. Attachment URLs are
 * signed CDN links (`cdn.discordapp.com/attachments/<channel>/<id>/<name>?ex=…&is=…&hm=…`, the
 * Attachment object of discord.com/developers/docs/resources/message): fetched without the bot token,
 * and only from Discord's CDN hosts (or the configured API host, for fakes and proxies). An
 * attachment is refused without a request when its link has expired (`ex`, hex seconds) or names
 * another channel than the message's (a file the person may not see here).
 */
import type { FileSource, InboundFile } from "../../core/files/types.js";

export const DISCORD_CDN_HOSTS = ["cdn.discordapp.com", "media.discordapp.net"] as const;

/** What Neo reads of a discord.js `Attachment`. */
export interface AttachmentFacts {
  id: string;
  name: string;
  contentType: string | null;
  size: number;
  url: string;
}

function refusal(a: AttachmentFacts, channelId: string, now: number): string | undefined {
  let url: URL;
  try {
    url = new URL(a.url);
  } catch {
    return "Discord gave no valid address for it";
  }
  const channel = /^\/(?:ephemeral-)?attachments\/(\d+)\//.exec(url.pathname)?.[1];
  if (channel && channel !== channelId) return "it was posted in another channel";
  const ex = url.searchParams.get("ex");
  if (ex && Number.parseInt(ex, 16) * 1000 <= now) return "its link has expired";
  return undefined;
}

export function discordFilesOf(
  attachments: Iterable<AttachmentFacts>,
  channelId: string,
  now = Date.now(),
): InboundFile[] {
  return [...attachments].map((a) => {
    const why = refusal(a, channelId, now);
    return {
      id: a.id,
      name: a.name,
      type: a.contentType?.split(";")[0]?.trim() ?? "",
      size: a.size,
      url: a.url,
      ...(why ? { refused: why } : {}),
    };
  });
}

/** Discord's CDN hosts (plus the API host when one is configured); signed URLs need no credential. */
export function discordFileSource(apiUrl?: string): FileSource {
  return {
    hosts: [...DISCORD_CDN_HOSTS, ...(apiUrl ? [new URL(apiUrl).host] : [])],
    headers: async () => ({}),
  };
}
