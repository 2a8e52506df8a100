/**
 * A FIFO semaphore: at most `size` turns run at once on this instance; the rest wait in arrival
 * order and are told their place in the line.
 */

export interface Slots {
  /** Resolves with a release function once a slot is free; `onWait` hears the place in line (1 = next). */
  acquire(onWait?: (position: number) => void): Promise<() => void>;
  readonly running: number;
  readonly waiting: number;
  /** Stop granting: every waiter (and later caller) gets a `SlotsClosedError`. */
  close(): void;
}

export class SlotsClosedError extends Error {
  readonly code = "SLOTS_CLOSED";
}

interface Waiter {
  grant: (release: () => void) => void;
  refuse: (err: Error) => void;
}

export function createSlots(size: number): Slots {
  let running = 0;
  let closed = false;
  const queue: Waiter[] = [];

  const makeRelease = (): (() => void) => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = queue.shift();
      if (next && !closed) next.grant(makeRelease());
      else running--;
    };
  };

  return {
    acquire(onWait) {
      if (closed) return Promise.reject(new SlotsClosedError("no new turns: shutting down"));
      if (running < size) {
        running++;
        return Promise.resolve(makeRelease());
      }
      return new Promise((grant, refuse) => {
        queue.push({ grant, refuse });
        onWait?.(queue.length);
      });
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
    close() {
      closed = true;
      for (const w of queue.splice(0)) w.refuse(new SlotsClosedError("no new turns: shutting down"));
    },
  };
}
