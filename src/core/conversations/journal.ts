/**
 * The durable side of a conversation in the store: the inbound journal (an append-only inbox per
 * conversation, deduped by platform id), the event log, the "has work" markers the sweep finds, and
 * the lease keys. Every write here completes before the caller moves on.
 *
 * Retention: inbox, log and marker expire together, `retentionMs` after the conversation's last
 * write (each write refreshes all three in its own atomic step), so an idle conversation leaves the
 * store whole and never half. A small `existed` key (no content) outlives them by one more horizon,
 * so a thread that speaks again is known to start over rather than to be new.
 */

import type { Store, StoreStep } from "../../store/types.js";
import { type ConversationKey, hashTag, hashTagOf } from "../keys.js";
import type { LogEntry } from "./log-entry.js";
import { laterPosition } from "./position.js";
import { speakersKey } from "./speakers.js";
import type { InboundMessage, ThreadReach } from "./types.js";

/** Journaled messages read to find how far the transcript reaches (concurrent deliveries reorder a few). */
const SEEN_TAIL = 32;

// Every key carries the conversation's hash tag: `appendOnce` takes claim, inbox and marker at once.
const K = {
  inbox: (c: ConversationKey) => `conv:inbox:${hashTag(c)}`,
  log: (c: ConversationKey) => `conv:log:${hashTag(c)}`,
  pending: (c: ConversationKey) => `conv:pending:${hashTag(c)}`,
  lock: (c: ConversationKey) => `conv:lock:${hashTag(c)}`,
  existed: (c: ConversationKey) => `conv:existed:${hashTag(c)}`,
  seen: (c: ConversationKey, id: string) => `conv:seen:${hashTag(c)}:${id}`,
};

export const PENDING_PREFIX = "conv:pending:";
export const LOCK_PREFIX = "conv:lock:";

/** Another writer appended to the log while we held the lease: our view is stale, stop. */
export class LogConflictError extends Error {
  readonly code = "LOG_CONFLICT";
}

/**
 * The log was shorter than this instance knew it (Redis restarted empty, the key evicted): the store
 * lost it. The holder's in-memory window is then the best copy left (`reseed`).
 */
export class LogLostError extends Error {
  readonly code = "LOG_LOST";
}

/** Inbox entries a snapshot reads when the reader knows nothing of the conversation (its newest). */
const SNAPSHOT_TAIL = 32;

/**
 * The conversation as a pass finds it, read in the round trip that takes its lease: the lengths of
 * log and inbox, and the inbox from `inbox.from` on (an unknown conversation's newest entries).
 */
export interface Snapshot {
  logLength: number;
  inboxLength: number;
  /** The conversation had a log the retention horizon deleted (`Journal.existed`), read in the same trip. */
  existed: boolean;
  inbox: { from: number; items: InboundMessage[] };
}

export interface Journal {
  /** Lengths and unread inbox, all in one round trip (see `Snapshot`); `from` = inbox entries already read. */
  snapshot(conversation: ConversationKey, from: number | undefined): Promise<Snapshot>;
  /**
   * Record the message once: false when this platform id was already journaled (within the TTL).
   * `withSpeaker`: its speaker is appended to the conversation's speakers in the same step.
   */
  record(message: InboundMessage, withSpeaker: boolean): Promise<boolean>;
  /**
   * Record a message this instance journaled before and the store may have lost: the store's claim
   * alone decides (false: it is there).
   */
  recordAgain(message: InboundMessage): Promise<boolean>;
  /** Inbox entries from index `from` on. */
  inboxFrom(conversation: ConversationKey, from: number): Promise<InboundMessage[]>;
  inboxLength(conversation: ConversationKey): Promise<number>;
  /** Highest `position` and `through` among the last journaled messages (`Conversations.threadReach`). */
  threadReach(conversation: ConversationKey): Promise<ThreadReach>;
  /** Append entries; `expectedLength` is the log length before them (else `LogConflictError`). */
  appendLog(
    conversation: ConversationKey,
    entries: readonly LogEntry[],
    expectedLength: number,
  ): Promise<number>;
  /**
   * `appendLog`, then the conversation as it then stands (`snapshot` from `from`), in one atomic
   * step (one command): a turn's write and its look at the inbox. `clear`: when the inbox holds
   * nothing past `from`, the "has work" marker is cleared in it too, and `clear.letGo` (a lease's
   * release, `Lease.letGoIn`) runs; `cleared` says whether they did.
   */
  appendAndLook(
    conversation: ConversationKey,
    entries: readonly LogEntry[],
    expectedLength: number,
    from: number | undefined,
    clear?: { letGo?: StoreStep },
  ): Promise<Snapshot & { cleared: boolean }>;
  /** Replace the inbox with `items`, as many as it held (an erasure, under the lease). */
  replaceInbox(conversation: ConversationKey, items: readonly InboundMessage[]): Promise<void>;
  /** Replace a lost or erased log with `entries` (under the lease). Returns the new length. */
  replaceLog(conversation: ConversationKey, entries: readonly LogEntry[]): Promise<number>;
  readLog(conversation: ConversationKey): Promise<LogEntry[]>;
  logLength(conversation: ConversationKey): Promise<number>;
  /**
   * Clear the "has work" marker (the holder saw the inbox fully taken) and read the inbox from
   * `from` on, in one atomic step: a message journaled just before the clear is in the read.
   */
  clearPending(conversation: ConversationKey, from: number): Promise<InboundMessage[]>;
  /** Set the marker again (the holder found work after clearing it). */
  markPending(conversation: ConversationKey): Promise<void>;
  /** Conversations whose marker says they may have work (unanswered messages or an open turn). */
  withPending(): Promise<ConversationKey[]>;
  /** Whether the conversation had a log within the last two horizons (its transcript expired). */
  existed(conversation: ConversationKey): Promise<boolean>;
  lockKey(conversation: ConversationKey): string;
  inboxKey(conversation: ConversationKey): string;
}

/** How many recent claims an instance remembers (a platform redelivers within minutes). */
const RECENT_CLAIMS = 20_000;

/** The conversation's log, read only (`conversation_lookup`). */
export function readConversationLog(store: Store, c: ConversationKey): Promise<LogEntry[]> {
  return store.range<LogEntry>(K.log(c), 0, -1);
}

export function createJournal(store: Store, dedupeTtlMs: number, retentionMs: number): Journal {
  /** The keys that hold the conversation, ending together `retentionMs` after its last write. */
  const expiry = (c: ConversationKey) => ({
    keys: [K.inbox(c), K.log(c), K.pending(c), speakersKey(c)],
    ttlMs: retentionMs,
  });
  // Claims this instance made, until they expire: a redelivery of a message journaled here is a
  // duplicate even if the store lost its claim (Redis restarted empty) along with the message.
  const recent = new Map<string, number>();
  const remember = (claim: string): void => {
    recent.delete(claim);
    recent.set(claim, Date.now() + dedupeTtlMs);
    if (recent.size > RECENT_CLAIMS) recent.delete(recent.keys().next().value as string);
  };
  /** The steps that append `entries` to the log, refresh the conversation's expiry and mark it as having existed. */
  const logSteps = (c: ConversationKey, entries: readonly LogEntry[]): StoreStep[] => [
    { op: "append", key: K.log(c), items: entries },
    ...expiry(c).keys.map((key): StoreStep => ({ op: "expire", key, ttlMs: retentionMs })),
    { op: "set", key: K.existed(c), value: 1, ttlMs: 2 * retentionMs },
  ];
  /** The log's length after an append of `count` entries that expected `expectedLength` before them. */
  const checkLength = (c: ConversationKey, length: number, expectedLength: number, count: number): number => {
    if (length < expectedLength + count) {
      throw new LogLostError(
        `conversation ${c}: log holds ${length} entries after this append, expected ${expectedLength + count}; the store lost it`,
      );
    }
    if (length !== expectedLength + count) {
      throw new LogConflictError(
        `conversation ${c}: log grew to ${length}, expected ${expectedLength + count}; another instance wrote to it`,
      );
    }
    return length;
  };
  const append = async (message: InboundMessage, withSpeaker = false): Promise<boolean> => {
    // Claim, append and "has work" marker in one atomic step: a store that fails midway must not
    // leave a claim that makes the platform's retry look like a duplicate of a message never kept.
    const c = message.conversation;
    const claim = K.seen(c, message.id);
    const speaker = withSpeaker ? { key: speakersKey(c), items: [message.speaker.userKey] } : undefined;
    const fresh = await store.appendOnce(
      claim,
      dedupeTtlMs,
      K.inbox(c),
      [message],
      K.pending(c),
      expiry(c),
      speaker,
    );
    if (fresh) remember(claim);
    return fresh;
  };
  return {
    async record(message, withSpeaker) {
      const until = recent.get(K.seen(message.conversation, message.id));
      if (until !== undefined && until > Date.now()) return false;
      return append(message, withSpeaker);
    },
    recordAgain: (message) => append(message),
    async snapshot(c, from) {
      const [logLength, inboxLength, read, existed] = await store.batch([
        { op: "length", key: K.log(c) },
        { op: "length", key: K.inbox(c) },
        { op: "range", key: K.inbox(c), start: from ?? -SNAPSHOT_TAIL, stop: -1 },
        { op: "get", key: K.existed(c) },
      ]);
      const items = read as InboundMessage[];
      // Read together, so the lengths and the items agree.
      const start = from === undefined ? Math.max(0, inboxLength - items.length) : from;
      return { logLength, inboxLength, existed: existed !== undefined, inbox: { from: start, items } };
    },
    inboxFrom: (c, from) => store.range<InboundMessage>(K.inbox(c), from, -1),
    inboxLength: (c) => store.length(K.inbox(c)),
    async threadReach(c) {
      // Messages are journaled close to platform order; the last few hold the highest positions.
      const tail = await store.range<InboundMessage>(K.inbox(c), -SEEN_TAIL, -1);
      let seen: string | undefined;
      let covered: string | undefined;
      for (const m of tail) {
        seen = laterPosition(seen, m.position);
        covered = laterPosition(covered, m.through);
      }
      return { ...(seen ? { seen } : {}), ...(covered ? { covered } : {}) };
    },
    async appendLog(c, entries, expectedLength) {
      const [length] = await store.batch(logSteps(c, entries));
      return checkLength(c, length as number, expectedLength, entries.length);
    },
    async appendAndLook(c, entries, expectedLength, from, clear) {
      const steps = logSteps(c, entries);
      const reads = steps.length;
      // The clear (and the release) only when the read found nothing new: the marker stays with work.
      const clearing: StoreStep[] =
        clear && from !== undefined
          ? [
              { op: "onlyIfLength", key: K.inbox(c), length: from },
              { op: "take", key: K.pending(c) },
              ...(clear.letGo ? [clear.letGo] : []),
            ]
          : [];
      const res = await store.batch([
        ...steps,
        { op: "length", key: K.inbox(c) },
        { op: "range", key: K.inbox(c), start: from ?? -SNAPSHOT_TAIL, stop: -1 },
        ...clearing,
      ]);
      const logLength = checkLength(c, res[0] as number, expectedLength, entries.length);
      const inboxLength = res[reads] as number;
      const items = res[reads + 1] as InboundMessage[];
      const start = from === undefined ? Math.max(0, inboxLength - items.length) : from;
      const cleared = clearing.length > 0 && res[reads + 2] === true;
      // The append just marked it as having existed.
      return { logLength, inboxLength, existed: true, inbox: { from: start, items }, cleared };
    },
    async replaceInbox(c, items) {
      // Not atomic with a concurrent `record`: one landing in between is lost from the store, and
      // journaled again by its instance's `unfetched` check (`journalMissing`).
      await store.delete(K.inbox(c));
      if (items.length > 0) await store.append(K.inbox(c), items, expiry(c));
    },
    async replaceLog(c, entries) {
      await store.delete(K.log(c));
      return store.append(K.log(c), entries, expiry(c));
    },
    readLog: (c) => readConversationLog(store, c),
    logLength: (c) => store.length(K.log(c)),
    async clearPending(c, from) {
      const [, items] = await store.batch([
        { op: "take", key: K.pending(c) },
        { op: "range", key: K.inbox(c), start: from, stop: -1 },
      ]);
      return items as InboundMessage[];
    },
    async markPending(c) {
      // Its own TTL, one horizon: a marker never outlives the conversation it points to by more.
      await store.set(K.pending(c), 1, retentionMs);
    },
    async withPending() {
      const keys = await store.keys(PENDING_PREFIX);
      return keys.flatMap((k) => hashTagOf(k) ?? []);
    },
    existed: async (c) => (await store.get(K.existed(c))) !== undefined,
    lockKey: K.lock,
    inboxKey: K.inbox,
  };
}
