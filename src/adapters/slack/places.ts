/**
 * What Neo knows of a Slack workspace's channels: the kind of place each is, for memory (DESIGN.md,
 * Memory scopes), and its name, for what the model reads. First from the event when it says so
 * (a message's `channel_type`: `im`, `mpim`, `group`, `channel`; `app_mention` and slash commands
 * carry none), then from the store (directory.ts: shared by every instance, kept across restarts,
 * learned from `conversations.info` and from change events), never by waiting for room.
 *
 * A channel whose kind is not known yet is read as `public`, the place shown the least memory, and
 * marked `guessed`: what its turn teaches is kept as learned in a `private` place (core/place.ts,
 * `learnedIn`), so a channel that turns out private never has its words shown in public ones.
 * Wider than true would leak; narrower only shows less. For the same reason news that narrows a
 * channel (made private) is taken even when it arrives after a later lookup.
 */
import { channelKey } from "../../core/keys.js";
import type { Place, PlaceKind } from "../../core/place.js";
import type { Store } from "../../store/types.js";
import { createDirectory, type DirectoryEntry, newerWins } from "./directory.js";
import type { ChannelInfo } from "./outbound/lookups.js";
import type { RateRule } from "./rate-gate/key-state.js";

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
 * What an id alone says: `D…` is a DM, `G…` a private channel or group DM from before March 2021
 * (https://api.slack.com/events/member_joined_channel); `C…` may be either, public or private.
 */
export function kindOfId(channel: string): PlaceKind | undefined {
  if (channel.startsWith("D")) return "dm";
  return channel.startsWith("G") ? "private" : undefined;
}

/** What is kept of a channel. */
export interface ChannelFacts {
  kind: PlaceKind;
  /** Without `#`; a DM's is its id. */
  name: string;
}

const AUDIENCE: Record<PlaceKind, number> = { dm: 0, private: 1, public: 2 };

/** Later news wins; older news is still taken when it narrows the place (made private). */
export function mergeChannel(
  current: DirectoryEntry<ChannelFacts> | undefined,
  value: Partial<ChannelFacts>,
  at: number,
): DirectoryEntry<ChannelFacts> | undefined {
  const newer = newerWins(current, value, at);
  if (newer || !current || !value.kind) return newer;
  const was = current.value.kind;
  if (was !== undefined && AUDIENCE[value.kind] >= AUDIENCE[was]) return undefined;
  return { value: { ...current.value, kind: value.kind }, at: current.at };
}

export interface SlackChannels {
  /**
   * The place `channel` is; `channelType` from the event when it carried one. Never waits for room:
   * an unknown kind is `public`, `guessed`, and asked of Slack for the next turn.
   */
  place(channel: string, channelType?: string): Promise<Place>;
  /**
   * The channel's name: kept, else asked of Slack if `conversations.info` has room this instant,
   * else undefined (asked in the background, for next time). Never waits for room.
   */
  name(channel: string): Promise<string | undefined>;
  /** What an event said of the channel at `at` (ms). */
  learn(channel: string, facts: Partial<ChannelFacts>, at: number): Promise<void>;
  /** Look the channel up in the background (Neo joined it). */
  refresh(channel: string): void;
  /** The channel is gone (deleted). */
  forget(channel: string): Promise<void>;
  stop(): void;
}

/** An entry older than this is used and asked again in the background. */
export const CHANNEL_STALE_MS = 60 * 60_000;
/** How long an entry is kept without being learned again. */
const CHANNEL_TTL_MS = 7 * 24 * 60 * 60_000;

export function createSlackChannels(o: {
  store: Store;
  team: string;
  rule: RateRule;
  channelInfo(channel: string, opts: { optional: boolean }): Promise<ChannelInfo | undefined>;
}): SlackChannels {
  const dir = createDirectory<ChannelFacts>({
    store: o.store,
    key: (channel) => `directory:channel:${channelKey({ platform: "slack", workspace: o.team, channel })}`,
    fetch: async (channel, optional) => {
      const info = await o.channelInfo(channel, { optional });
      return info && { kind: kindOfInfo(info), name: info.name };
    },
    merge: mergeChannel,
    complete: (v) => v.kind !== undefined && v.name !== undefined,
    retryMs: Math.ceil(o.rule.windowMs / o.rule.limit),
    staleMs: CHANNEL_STALE_MS,
    ttlMs: CHANNEL_TTL_MS,
    method: "conversations.info",
  });
  return {
    async place(channel, channelType) {
      const kind =
        kindOfChannelType(channelType) ??
        kindOfId(channel) ??
        (await dir.now(channel, (v) => v.kind !== undefined))?.kind;
      return kind ? { kind, workspace: o.team } : { kind: "public", workspace: o.team, guessed: true };
    },
    name: async (channel) => (await dir.now(channel, (v) => v.name !== undefined, true))?.name,
    learn: (channel, facts, at) => dir.learn(channel, facts, at),
    refresh: dir.refresh,
    forget: dir.forget,
    stop: dir.stop,
  };
}
