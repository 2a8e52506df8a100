/**
 * What kind of place a Slack conversation is, for memory (DESIGN.md, Memory scopes). Message events
 * say it in `channel_type` (`im`, `mpim`, `group`, `channel`); `app_mention` and slash commands do
 * not, so `conversations.info` is asked (`is_im`, `is_mpim`, `is_private`) and the answer kept a
 * while per channel. A channel made private or public is seen again once the entry expires. A failed
 * lookup is kept too, for a minute: the id's reading (the narrowest place it can be) holds meanwhile,
 * instead of every message of a busy channel spending a Tier 3 call on a lookup that fails.
 */

import { log } from "../../core/log.js";
import type { PlaceKind } from "../../core/place.js";
import type { ChannelInfo } from "./outbound/lookups.js";
import type { SlackOutbound } from "./outbound.js";

/** `channel_type` of message events (https://api.slack.com/events/message). */
export function kindOfChannelType(channelType: string | undefined): PlaceKind | undefined {
  switch (channelType) {
    case "im":
      return "dm";
    case "mpim":
    case "group":
      return "private";
    case "channel":
      return "public";
    default:
      return undefined;
  }
}

export function kindOfInfo(c: ChannelInfo): PlaceKind {
  if (c.isIm) return "dm";
  return c.isMpim || c.isPrivate ? "private" : "public";
}

/**
 * When `conversations.info` cannot be asked: the id's prefix (`D` DM, `G` legacy private group),
 * else public, the place that is shown the least memory.
 */
export function kindOfId(channel: string): PlaceKind {
  if (channel.startsWith("D")) return "dm";
  return channel.startsWith("G") ? "private" : "public";
}

export interface SlackPlaces {
  /** The kind of `channel`; `channelType` from the event when it carried one. */
  kind(channel: string, channelType?: string): Promise<PlaceKind>;
}

const plog = log.child({ component: "slack" });

/** How long a failed `conversations.info` answer (the id's reading) is kept. */
export const FAILED_LOOKUP_TTL_MS = 60_000;

export function createSlackPlaces(out: SlackOutbound, ttlMs = 5 * 60_000, max = 5000): SlackPlaces {
  const cache = new Map<string, { kind: PlaceKind; until: number }>();
  const keep = (channel: string, kind: PlaceKind, forMs: number): PlaceKind => {
    cache.delete(channel);
    if (cache.size >= max) cache.delete(cache.keys().next().value as string);
    cache.set(channel, { kind, until: Date.now() + forMs });
    return kind;
  };
  return {
    async kind(channel, channelType) {
      const told = kindOfChannelType(channelType);
      if (told) return told;
      const hit = cache.get(channel);
      if (hit && Date.now() < hit.until) return hit.kind;
      try {
        return keep(channel, kindOfInfo(await out.channelInfo(channel)), ttlMs);
      } catch (err) {
        const kind = kindOfId(channel);
        plog.warn({ err, channel, kind }, "conversations.info failed; the place kind is read from the id");
        return keep(channel, kind, Math.min(ttlMs, FAILED_LOOKUP_TTL_MS));
      }
    },
  };
}
