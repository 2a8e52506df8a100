/**
 * How user messages join the transcript: the turn's opening message (with the channel's settings and
 * the memory page read alongside it), and the requester's messages that queue while the turn runs.
 */
import {
  type ChannelSettings,
  channelOf,
  DEFAULT_CHANNEL_SETTINGS,
  restrictTools,
} from "../channels/index.js";
import type { FileIntake } from "../files/intake.js";
import { log } from "../log.js";
import type { MemoryPage } from "../memory-port.js";
import type { ToolSurface } from "../tools/types.js";
import type { AgentDeps } from "./deps.js";
import { gateSignIns } from "./sign-in.js";
import type { Transcript } from "./transcript.js";
import type { TurnContext, TurnInput, TurnProgress } from "./types.js";
import { contextMessage, cutNotice, enterUserMessage } from "./user-message.js";
import { filesRoom, IMAGES_UNREAD_NOTICE, imagesToldUnread } from "./with-files.js";

/** What a turn starts from once its opening messages are in the transcript. */
export interface OpenedTurn {
  /** The requester's words (opening and queued messages), what memory is searched with. */
  asked: string;
  page: MemoryPage;
  channel: ChannelSettings;
  /** The tools this channel allows, less those of servers the requester has yet to sign in to. */
  tools: ToolSurface;
  /** Lines for the model about tools left out of this turn (sign-ins). */
  toolNotes: string[];
  /**
   * The opening message's log write, still in flight for a plain message: the model is asked
   * meanwhile (its request needs no round trip of its own), and the turn awaits this before it
   * uses the reply or ends. Rejects with the store's error if the write failed.
   */
  logged: Promise<void>;
}

export interface TurnEntry {
  open(
    input: TurnInput,
    ctx: TurnContext,
    progress: TurnProgress,
    fault: (query: string) => Promise<MemoryPage>,
  ): Promise<OpenedTurn>;
  /**
   * Messages that arrived meanwhile join the transcript (the inbox hands over only the requester's
   * own, in order; other people's wait for their own turn). Returns their texts as read.
   */
  enterQueued(ctx: TurnContext, progress: TurnProgress): Promise<string[]>;
}

/** A store that cannot be read leaves the channel on its defaults for this turn (logged). */
async function channelSettings(
  channels: AgentDeps["channels"],
  conversation: string,
): Promise<ChannelSettings> {
  if (!channels) return DEFAULT_CHANNEL_SETTINGS;
  try {
    return await channels.get(channelOf(conversation));
  } catch (err) {
    log.warn({ err, conversation }, "channel settings unreadable; this turn uses the defaults");
    return DEFAULT_CHANNEL_SETTINGS;
  }
}

export function createTurnEntry(deps: AgentDeps, files: FileIntake, t: Transcript): TurnEntry {
  const { limits } = deps;

  /**
   * A user message joins the transcript (cut, and the user told, if it alone would crowd out the
   * window). `logged`: a plain message's log write, left in flight (see `OpenedTurn.logged`).
   */
  const enter = async (
    input: TurnInput,
    ctx: TurnContext,
  ): Promise<{ text: string; logged: Promise<void> }> => {
    // Other people's earlier messages come first, as their own message with no speaker.
    if (input.context?.length) await t.append({ role: "user", content: contextMessage(input.context) }, ctx);
    if (!input.files?.length) {
      const m = enterUserMessage(input, ctx.shared, limits.contextWindow);
      if (m.cut) await ctx.reporter.notice(cutNotice(m.cut));
      const logged = t.append({ role: "user", content: m.content, speaker: input.speaker }, ctx);
      // Awaited by the turn; until then a failure must not count as unhandled.
      logged.catch(() => undefined);
      return { text: m.text, logged };
    }
    // Files are read (and images kept for the turn) before the message is logged, which names them.
    const told = imagesToldUnread(t.working);
    const room = filesRoom(t.working, limits.contextWindow);
    const read = await files.read(ctx.conversation, input.files, ctx.files, ctx.signal, room);
    for (const n of read.notices) await ctx.reporter.notice(n);
    if (read.unreadImages > 0 && !told) await ctx.reporter.notice(IMAGES_UNREAD_NOTICE);
    const m = enterUserMessage(input, ctx.shared, limits.contextWindow, read.text);
    if (m.cut) await ctx.reporter.notice(cutNotice(m.cut));
    await t.append({ role: "user", content: m.content, speaker: input.speaker, files: read.refs }, ctx);
    // Memory is searched with the person's words, not the files' contents.
    return { text: input.text, logged: Promise.resolve() };
  };

  const enterQueued = async (ctx: TurnContext, progress: TurnProgress): Promise<string[]> => {
    const texts: string[] = [];
    for (const queued of ctx.drainInbox?.() ?? []) {
      const { text, logged } = await enter(queued, ctx);
      await logged;
      texts.push(text);
      progress.consumed++;
    }
    return texts;
  };

  const open: TurnEntry["open"] = async (input, ctx, progress, fault) => {
    // The channel's settings as they are when the turn starts (an admin's change applies next turn),
    // the opening message's log write and, for a plain message (in the window as soon as `enter`
    // starts), the memory page: read and written together, in one round trip to the store, and
    // the model call waits only for the reads.
    const channelP = channelSettings(deps.channels, ctx.conversation);
    const entering = enter(input, ctx);
    const plain = !input.files?.length && !input.context?.length;
    const opening = plain ? enterUserMessage(input, ctx.shared, limits.contextWindow) : undefined;
    const early = opening && !opening.cut ? fault(opening.text) : undefined;
    early?.catch(() => undefined); // awaited below, or superseded; never an unhandled rejection
    // The requester's messages that queued behind the opening one are answered in this same turn.
    const first = await entering;
    const words = [first.text, ...(await enterQueued(ctx, progress))];
    const asked = words.join("\n");
    // The early page searched the opening's words only: queued messages need a search of their own.
    const page = early && words.length === 1 ? await early : await fault(asked);
    const channel = await channelP;
    const allowed = channel.tools ? restrictTools(deps.tools, channel.tools) : deps.tools;
    const { tools, notes } = deps.signIn
      ? await gateSignIns(deps.signIn, allowed, input.speaker, ctx.forms, channel.tools)
      : { tools: allowed, notes: [] };
    return { asked, page, channel, tools, toolNotes: notes, logged: first.logged };
  };

  return { open, enterQueued };
}
