/**
 * Which Discord messages Neo takes, and how they map onto conversations. `classify` is pure: it sees
 * the facts of a message and says ignore (with the reason for the debug log) or where it goes.
 */

export type ChannelKind = "dm" | "text" | "thread" | "other";

/** What `classify` needs to know about a message. */
export interface MessageFacts {
  authorIsBot: boolean;
  /** The author is a bot listed in `NEO_ANSWER_BOTS`: answered like a person. */
  authorIsAllowedBot: boolean;
  authorIsNeo: boolean;
  /** Webhook or system message (joins, pins, thread-created notices). */
  system: boolean;
  kind: ChannelKind;
  /** The message mentions Neo's user directly (not @everyone or a role). */
  mentionsNeo: boolean;
  /** For threads: Neo already holds a conversation here (it opened it, or was mentioned in it). */
  knownThread: boolean;
  /**
   * The channel's settings let this message in without a mention (`channelGate`: mention optional).
   * A mention is still needed for everything else outside Neo's threads.
   */
  mentionOptional: boolean;
  content: string;
  /**
   * The message carries attachments (read as files) or forwards another message (its content is in
   * the snapshot): either way a message with no text of its own is not empty.
   */
  hasFilesOrForward: boolean;
}

export type Route =
  | { action: "ignore"; reason: string; emptyContent?: true }
  /** Mention in a text channel: open a public thread on the message; the conversation lives there. */
  | { action: "open-thread" }
  /** A message in a thread that is (or now becomes) Neo's; `join` = first time, bring history in. */
  | { action: "thread"; join: boolean }
  | { action: "dm" };

export function classify(f: MessageFacts): Route {
  if (f.authorIsNeo) return { action: "ignore", reason: "message is Neo's own" };
  if (f.authorIsBot && !f.authorIsAllowedBot) return { action: "ignore", reason: "author is a bot" };
  if (f.system) return { action: "ignore", reason: "system or webhook message" };
  if (f.kind === "dm") {
    return f.content.trim() || f.hasFilesOrForward
      ? { action: "dm" }
      : { action: "ignore", reason: "empty DM" };
  }
  if (f.kind === "other") return { action: "ignore", reason: "channel type Neo does not answer in" };
  if (f.kind === "text") {
    return f.mentionsNeo || f.mentionOptional
      ? { action: "open-thread" }
      : { action: "ignore", reason: "no mention of Neo in a channel" };
  }
  if (f.knownThread) {
    if (!f.content.trim() && !f.mentionsNeo && !f.hasFilesOrForward) {
      return {
        action: "ignore",
        reason: "empty content in Neo's thread: the Message Content intent is probably not enabled",
        emptyContent: true,
      };
    }
    return { action: "thread", join: false };
  }
  return f.mentionsNeo || f.mentionOptional
    ? { action: "thread", join: true }
    : { action: "ignore", reason: "thread Neo is not part of, and no mention" };
}

/** A short thread name from the opening message (Discord allows 1..100 characters). */
export function threadName(text: string, author: string): string {
  const line = text.split("\n")[0]!.trim();
  const base = line || `Neo and ${author}`;
  return base.length > 90 ? `${base.slice(0, 89)}…` : base;
}
