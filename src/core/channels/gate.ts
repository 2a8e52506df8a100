/**
 * The one decision whether a message gets an answer, given its channel's settings. Every adapter
 * asks it for every inbound message (after the platform's own filters: Neo's posts, bots, system
 * messages), so "disabled" and "mention optional" mean the same on every platform.
 */
import type { ChannelSettings } from "./settings.js";

export interface MessagePlace {
  /** A direct message: channel settings do not apply. */
  dm: boolean;
  /** The message mentions Neo. */
  mentioned: boolean;
  /** A follow-up in a thread Neo already answers in. */
  followUp: boolean;
}

export type GateVerdict = { answer: true } | { answer: false; reason: string };

export function channelGate(settings: ChannelSettings, m: MessagePlace): GateVerdict {
  if (m.dm) return { answer: true };
  if (!settings.enabled) return { answer: false, reason: "Neo is turned off in this channel" };
  if (m.mentioned || m.followUp || settings.mention === "optional") return { answer: true };
  return { answer: false, reason: "channel message without a mention" };
}
