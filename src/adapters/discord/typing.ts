/**
 * Typing indicator kept alive while a turn runs. Discord shows it for ~10 s per call, so it is
 * refreshed every 8 s; it stops when the answer lands, and on its own after a quiet spell so a turn
 * that dies silently does not type forever.
 */
import { log } from "../../core/log.js";

export interface Typing {
  /** Start (or keep) typing; also counts as activity. */
  start(): void;
  stop(): void;
}

export interface TypingOptions {
  intervalMs?: number;
  /** Stop after this long without `start()` calls. */
  idleMs?: number;
}

export function createTyping(send: () => Promise<void>, opts: TypingOptions = {}): Typing {
  const intervalMs = opts.intervalMs ?? 8000;
  const idleMs = opts.idleMs ?? 120_000;
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
    if (timer) clearInterval(timer);
    timer = null;
  };
  return {
    start() {
      lastActivity = Date.now();
      if (timer) return;
      timer = setInterval(tick, intervalMs);
      timer.unref();
      tick();
    },
    stop,
  };
}
