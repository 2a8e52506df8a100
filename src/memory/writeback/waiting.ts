/**
 * The write-back jobs waiting, per user (at most `capacity` each: the seed's one-user queue), and
 * whose turn it is: users are served in turn among those due. A user is due at once when their
 * queue is full (their next job would be dropped); otherwise not while their own call runs, and not
 * while turns run (the answers come first) unless their oldest job has waited `maxDeferMs`.
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
   * When the first user left waiting for the turns is due all the same; undefined when none waits
   * for them (no turn runs, or every waiting user waits for their own call).
   */
  dueAnyway(): number | undefined;
}

export interface WaitingOptions {
  capacity: number;
  maxDeferMs: number;
  /** The turns running; without it nobody waits for them. */
  foreground?: Foreground;
  /** Whether the user's own consolidation is running. */
  calling(user: UserKey): boolean;
}

export function createWaitingJobs(opts: WaitingOptions): WaitingJobs {
  const { capacity, maxDeferMs, foreground, calling } = opts;
  /** Waiting jobs per user, oldest first. */
  const jobs = new Map<UserKey, WriteBackJob[]>();
  /** Users with waiting jobs, in the order they are served (round robin). */
  const order: UserKey[] = [];
  /** When each waiting user's oldest job was queued. */
  const since = new Map<UserKey, number>();
  const turnsRun = () => foreground !== undefined && foreground.running > 0;

  const due = (user: UserKey, now: number): boolean => {
    if (jobs.get(user)!.length >= capacity) return true;
    if (calling(user)) return false;
    return !turnsRun() || now - since.get(user)! >= maxDeferMs;
  };

  return {
    add(job, now) {
      const queue = jobs.get(job.user);
      if ((queue?.length ?? 0) >= capacity) return false;
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
      return { user, batch };
    },
    dueAnyway() {
      if (!turnsRun()) return undefined;
      const deferred = order.filter((u) => !calling(u));
      return deferred.length ? Math.min(...deferred.map((u) => since.get(u)! + maxDeferMs)) : undefined;
    },
  };
}
