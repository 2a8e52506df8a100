/**
 * Start-up recovery and the periodic sweep: free the leases this instance's previous run left,
 * then look in the store for conversations with work nobody holds (and threads whose work failed
 * here) and start their workers.
 */
import { log } from "../log.js";
import { type Journal, LOCK_PREFIX } from "./journal.js";
import type { Leases } from "./lease.js";
import type { ConversationsOptions } from "./types.js";
import type { Workers } from "./workers.js";

export interface Sweep {
  /** Free this instance's stale leases, sweep once, then sweep every `limits.sweepMs`. */
  start(): Promise<void>;
  stop(): void;
}

export function createSweep(
  options: ConversationsOptions,
  journal: Journal,
  leases: Leases,
  workers: Workers,
): Sweep {
  const { store, limits, instanceId } = options;
  const { retry, thread, schedule } = workers;
  let sweepTimer: NodeJS.Timeout | null = null;
  let sweeping = false;

  const sweep = async (): Promise<void> => {
    if (sweeping || workers.closing()) return;
    sweeping = true;
    try {
      if (store.healthy()) {
        for (const key of retry) {
          const t = thread(key);
          if (!t.working) schedule(t);
        }
      }
      for (const key of await journal.withPending()) {
        // Scheduled in its user's order when their earlier threads start.
        if (workers.parked.has(key)) continue;
        const t = thread(key);
        if (!t.working) schedule(t);
      }
    } catch (err) {
      log.warn({ err }, "conversation sweep failed; next sweep retries");
    } finally {
      sweeping = false;
    }
  };

  return {
    async start() {
      const cleared = await leases.clearOwnStale(LOCK_PREFIX);
      if (cleared > 0) log.info({ cleared, instanceId }, "freed leases left by this instance's previous run");
      await sweep();
      sweepTimer = setInterval(() => void sweep(), limits.sweepMs);
      sweepTimer.unref();
    },

    stop() {
      if (sweepTimer) clearInterval(sweepTimer);
    },
  };
}
