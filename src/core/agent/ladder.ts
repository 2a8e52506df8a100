/**
 * The recovery ladder for one tool call. Rung 1: a `ToolTransportError` is retried with
 * exponential backoff up to `maxRetriesPerTool` times. Rung 2: an in-band error (including a
 * transport failure that outlived its retries) goes back to the model to adapt; the loop counts
 * those per tool. Rung 3 is `core_execute`; rung 4, the honest partial, is the loop's.
 */
import { log } from "../log.js";
import {
  type ToolCallContext,
  type ToolResult,
  type ToolSurface,
  ToolTransportError,
} from "../tools/types.js";

export class CancelledError extends Error {
  readonly code = "CANCELLED";
}

/** Resolves after `ms`, or rejects with `CancelledError` as soon as `signal` aborts. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new CancelledError("cancelled"));
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CancelledError("cancelled"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export interface LadderOptions {
  maxRetries: number;
  baseMs: number;
}

/** Dispatch with rung 1. Resolves with the tool's result or an in-band error; rejects only on cancel. */
export async function dispatchWithRetry(
  tools: ToolSurface,
  name: string,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
  opts: LadderOptions,
): Promise<ToolResult & { attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await tools.dispatch(name, args, ctx);
      return { ...result, attempts: attempt };
    } catch (e) {
      if (ctx.signal.aborted) throw new CancelledError("cancelled");
      if (!(e instanceof ToolTransportError)) {
        // The surface broke its contract; the model sees an in-band error, the operator a log line.
        log.error({ tool: name, err: (e as Error).message }, "tool surface threw a non-transport error");
        return { content: `Tool ${name} failed: ${(e as Error).message}`, isError: true, attempts: attempt };
      }
      if (attempt > opts.maxRetries) {
        return {
          content: `Tool ${name} is unavailable (failed ${attempt} times: ${e.message}). Try another approach.`,
          isError: true,
          attempts: attempt,
        };
      }
      await abortableDelay(opts.baseMs * 2 ** (attempt - 1), ctx.signal);
    }
  }
}
