/**
 * The turns running on this instance, for background work to give way to. Write-back consolidation
 * is background work: in a burst it would take the CPU the burst's answers need, so it waits until
 * no turn runs (see the consolidator for its bounds). The conversation layer counts its passes here.
 */

export interface Foreground {
  /** Turns running now. */
  readonly running: number;
  /** Calls `fn` once, as soon as no turn runs (at once when none does). */
  whenIdle(fn: () => void): void;
}

export interface TurnGauge extends Foreground {
  /** A turn started; the function returned ends it (calling it again does nothing). */
  begin(): () => void;
}

export function createTurnGauge(): TurnGauge {
  let running = 0;
  let waiters: Array<() => void> = [];
  const idle = () => {
    const due = waiters;
    waiters = [];
    for (const fn of due) fn();
  };
  return {
    get running() {
      return running;
    },
    whenIdle(fn) {
      if (running === 0) fn();
      else waiters.push(fn);
    },
    begin() {
      running++;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        running--;
        if (running === 0) idle();
      };
    },
  };
}
