/**
 * When a Slack draft writes: the first write a moment after the first text, then one per interval
 * after the end of the last, never two at once. What a write does is the mode's step.
 */
import { log } from "../../../core/log.js";

/** When a draft writes. */
export interface DraftPace {
  /** From the first text to the first write (an answer finished by then is said whole). */
  firstWriteMs: number;
  /** From the end of one write to the start of the next. */
  intervalMs: number;
}

export const DEFAULT_DRAFT_PACE: DraftPace = { firstWriteMs: 150, intervalMs: 1000 };

/** What one write attempt did: a call made, a call the workspace had no room for, or nothing to do. */
export type Step = "wrote" | "dropped" | "idle";

export interface DraftPacer {
  /** True once `quiesce` was called: no more writes. */
  readonly done: boolean;
  /** There is new text: write it when its turn comes. */
  nudge(): void;
  /** Stop writing: nothing pending, nothing in flight. */
  quiesce(): Promise<void>;
}

export function createDraftPacer(pace: DraftPace, channel: string, write: () => Promise<Step>): DraftPacer {
  let done = false;
  let firstAt = 0;
  let lastEnd = 0;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;

  const schedule = (): void => {
    if (done || timer || running) return;
    const due = Math.max(firstAt + pace.firstWriteMs, lastEnd + pace.intervalMs);
    timer = setTimeout(
      () => {
        timer = null;
        running = write()
          .catch((err: unknown): Step => {
            log.warn({ err, channel }, "slack draft write failed");
            return "dropped";
          })
          .then((step) => {
            running = null;
            // A write the workspace had no room for is tried again with the next text, a pace later.
            if (step !== "idle") lastEnd = Date.now();
            if (step === "wrote") schedule();
          });
      },
      Math.max(0, due - Date.now()),
    );
  };

  return {
    get done() {
      return done;
    },
    nudge() {
      if (firstAt === 0) firstAt = Date.now();
      schedule();
    },
    async quiesce() {
      done = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
