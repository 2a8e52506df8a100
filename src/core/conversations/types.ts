/**
 * The layer between adapters and the loop: one transcript per thread, journaled inbound, serialised
 * per thread, parallel across threads, safe across instances sharing a store.
 */

import type { BucketLimits, Store } from "../../store/types.js";
import type { AgentState, TurnContext, TurnInput, TurnResult } from "../agent/types.js";
import type { ApprovalChannel } from "../approvals/types.js";
import type { FileSource, InboundFile } from "../files/types.js";
import type { TurnGauge } from "../foreground.js";
import type { ConversationKey, Platform, Speaker, UserKey } from "../keys.js";
import type { Place } from "../place.js";
import type { AnswerKey, Reporter } from "../reporter.js";
import type { FormChannel } from "../tools/elicitation.js";

export interface InboundMessage {
  /** Platform id of the message or event (Slack event_id / ts, Discord message id). Dedupe key. */
  id: string;
  conversation: ConversationKey;
  speaker: Speaker;
  text: string;
  /** See `TurnContext.shared`. */
  shared: boolean;
  /** Files attached to the message (references; fetched when the message enters the transcript). */
  files?: InboundFile[];
  /** See `TurnContext.place`. Journaled with the message, so a resumed turn keeps it. */
  place: Place;
  /**
   * Earlier human messages of the thread the transcript does not hold yet ("Name: text", oldest
   * first): those before Neo was first addressed there, or missed since (see `position`).
   */
  context?: string[];
  /**
   * Where the message stands in its thread on the platform (Slack `ts`, Discord snowflake;
   * `position.ts`). Journaled, so the transcript itself says how far into the thread it reaches.
   */
  position?: string;
  /**
   * Set when the adapter read the thread up to this message (its `context` is everything unseen
   * before it): every thread message up to this position is then in the transcript.
   */
  through?: string;
  /** What the user has open beside the conversation (Slack's assistant panel: "#general"). */
  viewing?: string;
  receivedAt: number;
}

/** How far a conversation's transcript reaches into its platform thread (positions: `position.ts`). */
export interface ThreadReach {
  /** The highest `position` journaled; undefined when nothing was (Neo never addressed there). */
  seen?: string;
  /** The highest `through`: every thread message up to it is in the transcript. */
  covered?: string;
}

/** How a turn talks back on a platform. */
export interface ConversationIO {
  reporter: Reporter;
  approvals: ApprovalChannel;
  /** Where MCP servers' questions are shown to the turn's requester (absent: the server gets cancel). */
  forms?: FormChannel;
  /** Where the platform's files are fetched from, with its credential for those hosts only. */
  files?: FileSource;
  /** Tell the sender their message was taken while a turn runs (a reaction, or a status). */
  acknowledgeQueued?(message: InboundMessage): Promise<void>;
}

/** Implemented by each platform adapter. */
export interface PlatformAdapter {
  readonly platform: Platform;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The IO for a conversation, also used to finish turns resumed after a restart. */
  io(conversation: ConversationKey): ConversationIO;
  /** Whether the adapter's connection is up (for /healthz). */
  connected(): boolean;
}

export type SubmitResult = { accepted: true } | { accepted: false; reason: "duplicate" | "shutting_down" };

export interface ConversationStats {
  active: number;
  running: number;
  queued: number;
  waitingForSlot: number;
  /** Users whose waiting turns are held back by their turn rate (token bucket). */
  throttledUsers: number;
}

export interface Conversations {
  /**
   * Journal the message durably, then schedule it. Resolves once journaled, so the caller may ack
   * the platform. `io` overrides the adapter's default IO for this turn (e.g. `/neo ask`).
   */
  submit(message: InboundMessage, io?: ConversationIO): Promise<SubmitResult>;
  /** How far into its platform thread the conversation's transcript reaches. */
  threadReach(conversation: ConversationKey): Promise<ThreadReach>;
  /** Whether `user` has spoken in the conversation (journaled a message there). */
  spokeIn(conversation: ConversationKey, user: UserKey): Promise<boolean>;
  /**
   * Erase a person's words (`isTheirs` of a user key) from every conversation they spoke in, each
   * under its lease (`erase.ts`): their DMs keep none, shared threads a removal marker. Returns how many.
   */
  erase(isTheirs: (user: UserKey) => boolean): Promise<number>;
  /** Cancel any running turn and start the thread over. */
  reset(conversation: ConversationKey): Promise<void>;
  /** Compact this thread's transcript now. */
  compact(conversation: ConversationKey): Promise<void>;
  /** Cancel the running turn, if any. */
  cancel(conversation: ConversationKey): Promise<boolean>;
  stats(): ConversationStats;
  /** Stop taking work, let turns reach a cancellation point within `graceMs`, persist. */
  shutdown(graceMs: number): Promise<void>;
}

/** What the conversations layer needs of an agent (the loop's `createAgent(deps, state)` result). */
export interface ConversationAgent {
  chat(input: TurnInput, ctx: TurnContext): Promise<TurnResult>;
  state(): AgentState;
  compact(reason: "manual", ctx: TurnContext): Promise<void>;
  /** Post an answer the log holds (a resumed turn's) as its turn showed it, under `key`. */
  show(answer: string, reporter: Reporter, key?: AnswerKey): Promise<void>;
}

/** Limits of the conversations layer; defaults in `src/config.ts`. */
export interface ConversationLimits {
  /** Turns running at once on this instance (`NEO_MAX_CONCURRENT_TURNS`); the rest wait, shared fairly across users. */
  maxConcurrentTurns: number;
  /** Each user's turn rate on this instance: a token bucket (`NEO_USER_TURNS_PER_MINUTE`, `NEO_USER_TURN_BURST`). */
  userTurns: BucketLimits;
  /** User turns a conversation rebuilt from the store keeps (`NEO_RECALL_TURNS`, seed `Seed`). */
  recallTurns: number;
  /** An idle conversation leaves process memory after this long; its transcript stays in the store. */
  idleEvictMs: number;
  /**
   * A conversation idle this long is deleted from the store (`NEO_CONVERSATION_RETENTION_DAYS`) and
   * from this process's memory; its next message starts it over.
   */
  retentionMs: number;
  /** Lease on a conversation while an instance works on it; renewed every third of it. */
  leaseMs: number;
  /** How long a platform id is remembered to drop retried deliveries. */
  dedupeTtlMs: number;
  /** How often the store is swept for conversations with work nobody holds (dead instance, restart). */
  sweepMs: number;
}

export interface ConversationsOptions {
  store: Store;
  /** Builds an agent from replayed state; main wires `(state) => createAgent(agentDeps, state)`. */
  newAgent: (state: AgentState) => ConversationAgent;
  /**
   * What a turn will read about its requester (their memory), read now: called as the turn's lease
   * is asked for when a slot is free, so that read goes out with it (main wires the memory's `warm`).
   */
  warm?: (user: UserKey) => void;
  /** The default IO of a conversation (the platform adapter's `io`); also used for resumed turns. */
  io: (conversation: ConversationKey) => ConversationIO;
  limits: ConversationLimits;
  /** Unique per live process, stable across its restarts (its own stale leases are freed on start). */
  instanceId: string;
  /** Counts the passes running (each holds a turn slot), for background work to give way to. */
  turns?: TurnGauge;
}

/** `Conversations` plus the start-up step that recovers unfinished work from the store. */
export interface ConversationsService extends Conversations {
  /** Free this instance's stale leases, replay the journal (resume open turns), start the sweep. */
  start(): Promise<void>;
}
