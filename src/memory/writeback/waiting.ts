/**
 * The write-back jobs waiting, per user (at most `capacity` each: the seed's one-user queue), and
 * whose turn it is: users are served in turn among those due. A user is due at once when their
 * queue is full (their next job would be dropped); otherwise not while their own call runs, and
 * not until they have paused: no new job of theirs for `quietMs` and no turn running (the answers
 * come first), unless their oldest job has waited `maxDeferMs`. Turns in quick succession — a
 * burst, a user busy in several threads — are so consolidated in one call, not one call each; a
 * flush (`drained`, shutdown) makes every waiting user due.
 */
import type { Foreground } from "../../core/foreground.js";
import type { UserKey } from "../../core/keys.js";
import type { WriteBackJob } from "../../core/memory-port.js";

export interface WaitingJobs {
  /** Queue a job; false (nothing queued) when its user already has `capacity` waiting. */
  add(job: WriteBackJob, now: number): boolean;
  /** The next user due and all their waiting jobs, of every conversation (their queue is emptied). */
  take(now: number): { user: UserKey; batch: WriteBackJob[] } | undefined;
  /**
   * When the first user left waiting becomes due by the clock (a pause ending, or the bound on the
   * wait); undefined when none waits for it (nobody waits, or every waiting user waits for their
   * own call). While turns run, a pause counts only once they end: the caller also wakes then.
   */
  nextDue(): number | undefined;
  /** Every waiting user is due (not before their own call ends) until `flush(false)`. */
  flush(on: boolean): void;
}

export interface WaitingOptions {
  capacity: number;
  maxDeferMs: number;
  quietMs: number;
  /** The turns running; without it nobody waits for them. */
  foreground?: Foreground;
  /** Whether the user's own consolidation is running. */
  calling(user: UserKey): boolean;
}

export function createWaitingJobs(opts: WaitingOptions): WaitingJobs {
  const { capacity, maxDeferMs, quietMs, foreground, calling } = opts;
  /** Waiting jobs per user, oldest first. */
  const jobs = new Map<UserKey, WriteBackJob[]>();
  /** Users with waiting jobs, in the order they are served (round robin). */
  const order: UserKey[] = [];
  /** When each waiting user's oldest and newest jobs were queued. */
  const since = new Map<UserKey, number>();
  const latest = new Map<UserKey, number>();
  let flushing = false;
  const turnsRun = () => foreground !== undefined && foreground.running > 0;

  const due = (user: UserKey, now: number): boolean => {
    if (jobs.get(user)!.length >= capacity) return true;
    if (calling(user)) return false;
    if (flushing || now - since.get(user)! >= maxDeferMs) return true;
    return !turnsRun() && now - latest.get(user)! >= quietMs;
  };

  return {
    add(job, now) {
      const queue = jobs.get(job.user);
      if ((queue?.length ?? 0) >= capacity) return false;
      latest.set(job.user, now);
      if (!queue) {
        jobs.set(job.user, [job]);
        since.set(job.user, now);
        order.push(job.user);
        return true;
      }
      queue.push(job);
      return true;
    },
    take(now) {
      const i = order.findIndex((u) => due(u, now));
      if (i < 0) return undefined;
      const user = order.splice(i, 1)[0]!;
      const batch = jobs.get(user)!;
      jobs.delete(user);
      since.delete(user);
      latest.delete(user);
      return { user, batch };
    },
    nextDue() {
      const paused = !turnsRun();
      let at = Number.POSITIVE_INFINITY;
      for (const u of order) {
        if (calling(u)) continue;
        at = Math.min(at, since.get(u)! + maxDeferMs, paused ? latest.get(u)! + quietMs : at);
      }
      return Number.isFinite(at) ? at : undefined;
    },
    flush(on) {
      flushing = on;
    },
  };
}
