/**
 * Typing indicator kept alive while a turn runs. It starts only once the turn has gone `delayMs`
 * without anything shown (an answer ready sooner is its own sign of work; a typing call on top of it
 * would only spend a request of Discord's global 50/s). Discord shows it for ~10 s per call, so it is
 * refreshed every 8 s; it stops when the answer is about to be posted, and on its own after a quiet
 * spell so a turn that dies silently does not type forever.
 */
import { log } from "../../core/log.js";

export interface Typing {
  /** Type from `delayMs` on, unless stopped before (or keep typing); also counts as activity. */
  start(): void;
  stop(): void;
}

export interface TypingOptions {
  /** From `start()` to the first typing call. Default 1,000 ms. */
  delayMs?: number;
  intervalMs?: number;
  /** Stop after this long without `start()` calls. */
  idleMs?: number;
}

export function createTyping(send: () => Promise<void>, opts: TypingOptions = {}): Typing {
  const delayMs = opts.delayMs ?? 1000;
  const intervalMs = opts.intervalMs ?? 8000;
  const idleMs = opts.idleMs ?? 120_000;
  /** The pending first call, then the refresh interval. */
  let timer: NodeJS.Timeout | null = null;
  let lastActivity = 0;
  const tick = (): void => {
    if (Date.now() - lastActivity > idleMs) {
      stop();
      return;
    }
    send().catch((err: unknown) => log.debug({ err }, "discord typing failed"));
  };
  const stop = (): void => {
    // clearTimeout and clearInterval clear either kind.
    if (timer) clearTimeout(timer);
    timer = null;
  };
  return {
    start() {
      lastActivity = Date.now();
      if (timer) return;
      timer = setTimeout(() => {
        timer = setInterval(tick, intervalMs);
        timer.unref();
        tick();
      }, delayMs);
      timer.unref();
    },
    stop,
  };
}
