/**
 * Slack events to their handlers, from one global middleware installed after every other one.
 * Bolt runs every listener's chain for every request (about twenty here, each copying the request's
 * arguments at every step), so each message went through all of them to reach its one or two
 * handlers: a measurable share of Neo's own CPU per message. An event type handled here ends the
 * chain; every other request (actions, commands, events no one handles) goes on to Bolt's
 * listeners. The handlers of one event run concurrently and fail the way Bolt's listeners do: one
 * failure is rethrown as it is, several as a `MultipleListenerError`, to the app's error handler.
 */
import {
  type AllMiddlewareArgs,
  type AnyMiddlewareArgs,
  type App,
  MultipleListenerError,
  type SlackEventMiddlewareArgs,
} from "@slack/bolt";

export type EventHandler<T extends string> = (
  args: SlackEventMiddlewareArgs<T> & AllMiddlewareArgs,
) => Promise<void>;

export interface SlackEvents {
  /** Handles events of `type` (as `app.event(type, handler)` would; every handler of a type runs). */
  on<T extends string>(type: T, handler: EventHandler<T>): void;
}

type AnyHandler = (args: AnyMiddlewareArgs & AllMiddlewareArgs) => Promise<void>;

export interface EventRouter extends SlackEvents {
  /** Installs the router: after every other global middleware (event dedupe, the assistant panel). */
  install(app: App): void;
}

export function createEventRouter(): EventRouter {
  const handlers = new Map<string, AnyHandler[]>();
  return {
    on(type, handler) {
      const list = handlers.get(type) ?? [];
      list.push(handler as unknown as AnyHandler);
      handlers.set(type, list);
    },
    install(app) {
      app.use(async (args) => {
        const event = (args as { event?: { type?: unknown } }).event;
        const list = typeof event?.type === "string" ? handlers.get(event.type) : undefined;
        if (!list) return args.next();
        const settled = await Promise.allSettled(list.map(async (h) => h(args)));
        const failed = settled.flatMap((r) => (r.status === "rejected" ? [r.reason as Error] : []));
        if (failed.length === 1) throw failed[0];
        if (failed.length > 1) throw new MultipleListenerError(failed);
      });
    },
  };
}
