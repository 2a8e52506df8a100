/**
 * Discord never redelivers a message event (unlike Slack, which retries until it gets a 200). So
 * when the store cannot take a message (Redis down), the message waits here, in arrival order, and
 * is handled again until the store answers: a store outage delays messages instead of losing them.
 * Handling is idempotent by message id (thread reuse, journal dedupe), so a retry is safe.
 */
import type { Message } from "discord.js";
import { log } from "../../core/log.js";
import { StoreUnavailableError } from "../../store/types.js";

export interface InboundRetryOptions {
  /** Messages held at most; beyond this the newest is dropped with an error line. */
  maxPending?: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

export interface InboundRetry {
  /** Handle `message` now, or queue it behind earlier ones while the store is unavailable. */
  handle(message: Message): Promise<void>;
  pending(): number;
  /** The oldest message waiting for the store, if any. */
  oldest(): Message | undefined;
  /** Stop retrying (shutdown); what is still queued is logged with its ids. */
  stop(): void;
}

const storeDown = (err: unknown): boolean =>
  err instanceof StoreUnavailableError ||
  (err instanceof Error && err.cause instanceof StoreUnavailableError);

export function createInboundRetry(
  handler: (message: Message) => Promise<void>,
  opts: InboundRetryOptions = {},
): InboundRetry {
  const maxPending = opts.maxPending ?? 10_000;
  const firstDelayMs = opts.firstDelayMs ?? 250;
  const maxDelayMs = opts.maxDelayMs ?? 5_000;
  const queue: Message[] = [];
  let timer: NodeJS.Timeout | null = null;
  let delayMs = firstDelayMs;
  let draining = false;
  let stopped = false;

  const failed = (message: Message, err: unknown) =>
    log.error(
      { err, messageId: message.id, channelId: message.channelId },
      "discord message handling failed",
    );

  const enqueue = (message: Message): void => {
    if (queue.length >= maxPending) {
      log.error(
        { messageId: message.id, pending: queue.length },
        "discord: retry queue full; message dropped",
      );
      return;
    }
    queue.push(message);
    if (queue.length === 1)
      log.warn({ messageId: message.id }, "store unavailable; holding Discord messages");
    schedule();
  };

  const schedule = (): void => {
    if (timer || draining || stopped) return;
    timer = setTimeout(() => {
      timer = null;
      void drain();
    }, delayMs);
    delayMs = Math.min(maxDelayMs, delayMs * 2);
  };

  /** Oldest first; stops at the first message the store still cannot take. */
  const drain = async (): Promise<void> => {
    draining = true;
    try {
      while (queue.length > 0 && !stopped) {
        const message = queue[0]!;
        try {
          await handler(message);
        } catch (err) {
          if (storeDown(err)) return;
          failed(message, err);
        }
        queue.shift();
      }
      if (queue.length === 0) {
        delayMs = firstDelayMs;
        log.info("store back; held Discord messages handled");
      }
    } finally {
      draining = false;
      if (queue.length > 0) schedule();
    }
  };

  return {
    async handle(message) {
      if (stopped) return;
      // Keep order: while anything waits, newcomers wait behind it.
      if (queue.length > 0) return enqueue(message);
      try {
        await handler(message);
      } catch (err) {
        if (storeDown(err)) enqueue(message);
        else failed(message, err);
      }
    },
    pending: () => queue.length,
    oldest: () => queue[0],
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      if (queue.length > 0) {
        log.error(
          { messageIds: queue.map((m) => m.id) },
          "discord: stopping with messages the store never took",
        );
      }
    },
  };
}
