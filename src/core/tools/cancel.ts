/**
 * Cancelling a turn's running tool calls, and only those: each is settled at once and its server is
 * sent MCP's `notifications/cancelled` for the request.
 *
 * The SDK does this itself from an AbortSignal per request, but it adds a listener to that signal and
 * never removes it, so every request needs a signal of its own; that cost ~30 µs a call (~15 µs with
 * one signal shared by up to 32 calls of a turn) on a ~250 µs stdio round trip, more than all the rest
 * of dispatch (bench/tools.bench.ts). So requests go out without a signal: a turn's signal gets one
 * listener, its running calls sit in a set, and cancelling one tells the server the request's id,
 * noted from the transport as the request went out.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";

/** A call settled because its turn was cancelled. */
export class CallCancelledError extends Error {}

/** The request id of each `tools/call` sent, by its params object (the SDK sends the one it is given). */
const requestIds = new WeakMap<object, RequestId>();

/** Note the id of every `tools/call` request `transport` sends (see `requestIdOf`). */
export function noteToolCallIds<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if ("method" in message && message.method === "tools/call" && "id" in message && message.params) {
      requestIds.set(message.params, message.id);
    }
    return send(message, options);
  };
  return transport;
}

/** The id `tools/call` was sent with for these params, once it has gone out. */
export function requestIdOf(params: object): RequestId | undefined {
  return requestIds.get(params);
}

/** A running call of a turn: how to tell its server, and how to settle it. */
interface Running {
  onCancel: (reason: string) => void;
  reject: (err: Error) => void;
}

/** The calls running for each turn signal. */
const running = new WeakMap<AbortSignal, Set<Running>>();

function callsOf(turn: AbortSignal): Set<Running> {
  let calls = running.get(turn);
  if (!calls) {
    const set = new Set<Running>();
    turn.addEventListener(
      "abort",
      () => {
        const reason = String(turn.reason ?? "cancelled");
        for (const call of set) {
          call.onCancel(reason);
          call.reject(new CallCancelledError(`cancelled (${reason})`));
        }
        set.clear();
      },
      { once: true },
    );
    running.set(turn, set);
    calls = set;
  }
  return calls;
}

/**
 * `call`'s outcome, unless `turn` is aborted first: then it rejects at once with
 * `CallCancelledError` and `onCancel` runs with the turn's abort reason (to tell the server). `turn`
 * must not be aborted yet.
 */
export function untilCancelled<T>(
  call: Promise<T>,
  turn: AbortSignal,
  onCancel: (reason: string) => void,
): Promise<T> {
  const calls = callsOf(turn);
  // No named closures here: this runs on every tool call, and tsx wraps each named one (keepNames).
  return new Promise<T>((resolve, reject) => {
    const entry: Running = { onCancel, reject };
    calls.add(entry);
    call.then(
      (value) => {
        calls.delete(entry);
        resolve(value);
      },
      (err: unknown) => {
        calls.delete(entry);
        reject(err);
      },
    );
  });
}
