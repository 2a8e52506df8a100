/**
 * The ledger: every message the drivers sent (token, conversation, send time) and what the fakes
 * received back, timestamped where the fake received it. The fakes' recorded-call arrays are
 * observed by wrapping their `push`, so the time is taken the instant the fake records the call
 * (sub-millisecond clock), with no edit to the shared fakes.
 *
 * - answer: a bot post carrying `ACK-<token>` (one post may answer several merged messages);
 * - feedback: anything visible the bot did in the message's conversation before or with its answer
 *   (Slack: a status/notice post, an edit, a reaction; Discord: typing, a status line);
 * - conversations are closed-loop, so feedback in a conversation belongs to its latest message.
 */
import { ANSWER_RE } from "./model.js";

/** Wall-clock milliseconds with sub-millisecond resolution. */
export const now = (): number => performance.timeOrigin + performance.now();

export type Platform = "slack" | "discord";

export interface Sent {
  token: string;
  platform: Platform;
  conv: string;
  sentAt: number;
  firstFeedbackAt?: number;
  answers: number[];
  /** The first answer came in a post that also answered a later message (its own turn failed). */
  late?: boolean;
  /** Slack: the outcome of each delivery attempt ("200", "500", "refused", "cut", "timeout"). */
  deliveries?: string[];
}

export interface Ledger {
  sent: Map<string, Sent>;
  /** Record a message just before it is sent. */
  send(token: string, platform: Platform, conv: string): Sent;
  /** A conversation's key changed (a Discord thread became known): feedback there is its too. */
  alias(conv: string, key: string): void;
  /** `together` = how many tokens the post answered (more than one: merged or re-answered). */
  answer(token: string, at: number, together?: number): void;
  feedback(key: string, at: number): void;
  /** Resolves true on the first answer to `token`, false after `timeoutMs`. */
  answered(token: string, timeoutMs: number): Promise<boolean>;
  /** Bot posts that carried no token and were not attributable (notices in unknown places). */
  stray: number;
}

export function createLedger(): Ledger {
  const sent = new Map<string, Sent>();
  const latest = new Map<string, Sent>();
  const keys = new Map<string, string>();
  const early = new Map<string, number>();
  const waiters = new Map<string, Array<() => void>>();
  const ledger: Ledger = {
    sent,
    stray: 0,
    send(token, platform, conv) {
      const s: Sent = { token, platform, conv, sentAt: now(), answers: [] };
      sent.set(token, s);
      latest.set(conv, s);
      keys.set(conv, conv);
      return s;
    },
    alias(conv, key) {
      keys.set(key, conv);
      const at = early.get(key);
      const s = latest.get(conv);
      if (at !== undefined && s && at >= s.sentAt && s.firstFeedbackAt === undefined) s.firstFeedbackAt = at;
      early.delete(key);
    },
    answer(token, at, together = 1) {
      const s = sent.get(token);
      if (!s) {
        ledger.stray++;
        return;
      }
      if (s.answers.length === 0 && together > 1) s.late = true;
      s.answers.push(at);
      if (s.firstFeedbackAt === undefined || s.firstFeedbackAt > at) s.firstFeedbackAt = at;
      for (const w of waiters.get(token) ?? []) w();
      waiters.delete(token);
    },
    feedback(key, at) {
      const conv = keys.get(key);
      const s = conv === undefined ? undefined : latest.get(conv);
      if (!s) {
        if (!early.has(key)) early.set(key, at);
        return;
      }
      if (s.firstFeedbackAt === undefined && at >= s.sentAt) s.firstFeedbackAt = at;
    },
    answered(token, timeoutMs) {
      if ((sent.get(token)?.answers.length ?? 0) > 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        const list = waiters.get(token) ?? [];
        list.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
        waiters.set(token, list);
      });
    },
  };
  return ledger;
}

/** Call `onPush` for every item later pushed onto `calls` (the fakes' recorded-call arrays). */
export function observePush<T>(calls: T[], onPush: (item: T, at: number) => void): void {
  const push = calls.push.bind(calls);
  calls.push = (...items: T[]) => {
    const at = now();
    for (const item of items) onPush(item, at);
    return push(...items);
  };
}

/** Tokens answered in `text`. */
export function answeredTokens(text: string): string[] {
  return [...text.matchAll(ANSWER_RE)].map((m) => m[1]!);
}
