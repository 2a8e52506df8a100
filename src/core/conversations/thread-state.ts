/**
 * What one conversation's worker holds between passes: the in-memory agent and how far it has read
 * the log and the inbox (`Live`), the thread's own bookkeeping (`Thread`), and what work on it needs.
 */
import { StoreUnavailableError } from "../../store/types.js";
import type { ConversationKey, UserKey } from "../keys.js";
import type { Journal } from "./journal.js";
import { LogLostError } from "./journal.js";
import type { SlotGrant } from "./slots.js";
import type { TurnTokens } from "./turn-tokens.js";
import type { ConversationAgent, ConversationIO, ConversationsOptions, InboundMessage } from "./types.js";

/** What this instance knows of a conversation it has worked on. Valid while `logLength` matches. */
export interface Live {
  agent: ConversationAgent;
  logLength: number;
  /** Inbox entries the transcript holds. */
  taken: number;
  /** Inbox entries read from the store (taken + handed to the running turn + pending). */
  fetched: number;
  pending: InboundMessage[];
  /**
   * The turn the log shows opened and never ended (only right after a rebuild); `answer` = its
   * answer was logged (maybe never posted).
   */
  open: { from: number; answer: string | undefined; started: boolean; trace?: string } | null;
  /**
   * Work on it failed (the store went away): the agent may hold events the log does not, so it is
   * rebuilt from the log, unless the log came back shorter than this view (then this view reseeds it).
   */
  stale: boolean;
  /** Made by a reseed: the log restarted from this view (no open turn in it, whatever ran). */
  reseeded: boolean;
  /**
   * When this view last matched the store (ms). Older than the retention horizon, the store may have
   * ended the conversation: the view is dropped, not written back (`restore`).
   */
  syncedAt: number;
}

/** A job that must run while holding the lease (reset, compact). */
export interface Control {
  run(live: Live, env: ThreadEnv, t: Thread): Promise<void>;
  done(err?: unknown): void;
}

export interface Thread {
  key: ConversationKey;
  live: Live | null;
  working: Promise<void> | null;
  /** Poked while working: check for work again before stopping. */
  again: boolean;
  turn: AbortController | null;
  /** Per-message IO overrides (`submit(message, io)`), until the message is taken. */
  ios: Map<string, ConversationIO>;
  controls: Control[];
  idleTimer: NodeJS.Timeout | null;
  /**
   * The opening message id of a turn this process answered and posted but could not close in the
   * log (store down): its resume must not post the answer again.
   */
  delivered: string | null;
  /**
   * Whether the lease attempt of this instance's latest pass took the lease (false: another
   * instance held it; undefined: the store failed), set when the pass asks for it.
   */
  leaseAttempt: Promise<boolean | undefined> | null;
  /** The turn slot the current pass holds: it yields between turns when another turn waits. */
  slot: SlotGrant | null;
  /** A thread parked by `admit` and now scheduled: the user it was parked under (backlog.ts). */
  parkedFor: UserKey | null;
  /** The user whose turn token this pass's slot took and no turn has spent yet (turn-tokens.ts). */
  token: UserKey | null;
  /**
   * Messages journaled on this instance that it has not read back from the inbox yet: if the store
   * loses the inbox (Redis restarted empty), they are journaled again rather than lost.
   */
  unfetched: Map<string, InboundMessage>;
  /**
   * A turn the store cut (it went away mid-turn), finished when the store answers again: `answer` =
   * the model had written it (`shown`: and the user saw it, but the log never got it).
   */
  interrupted: {
    opening: InboundMessage;
    io: ConversationIO;
    answer: string | undefined;
    shown: boolean;
  } | null;
}

/** The store went away or lost what it held: not the person's problem; the work resumes later. */
export function isStoreTrouble(err: unknown): boolean {
  return err instanceof StoreUnavailableError || err instanceof LogLostError;
}

export interface ThreadEnv {
  journal: Journal;
  tokens: TurnTokens;
  options: ConversationsOptions;
  closing: () => boolean;
}

export type AbortReason = "shutdown" | "lease" | "cancel" | "reset";
