/**
 * Socket Mode with the HTTP receiver's ordering: Bolt's own Socket Mode receiver acks an event
 * before any listener runs, so a crash between the ack and the journal would lose the message.
 * This wrapper keeps Bolt's SocketModeClient but acks each envelope only after the app processed it
 * (the listener journaled it, or a command/action produced its ack payload). If processing fails,
 * the envelope is left unacked and Slack delivers it again.
 */
import { type App, type Receiver, type ReceiverEvent, SocketModeReceiver } from "@slack/bolt";
import { log } from "../../core/log.js";
import type { boltLogger } from "./bolt-logger.js";

interface SlackEventArgs {
  body: Record<string, unknown>;
  ack: (response?: Record<string, unknown>) => Promise<void>;
  retry_num?: number;
  retry_reason?: string;
}

export interface JournalFirstSocketReceiver extends Receiver {
  readonly client: SocketModeReceiver["client"];
}

export function createSocketReceiver(opts: {
  appToken: string;
  apiUrl?: string;
  logger: ReturnType<typeof boltLogger>;
}): JournalFirstSocketReceiver {
  const inner = new SocketModeReceiver({
    appToken: opts.appToken,
    logger: opts.logger,
    // apps.connections.open goes through SLACK_API_URL too (proxies, local fakes).
    installerOptions: { clientOptions: { ...(opts.apiUrl ? { slackApiUrl: opts.apiUrl } : {}) } },
  });
  let app: App | undefined;
  inner.client.removeAllListeners("slack_event");
  inner.client.on("slack_event", async (args: SlackEventArgs) => {
    let response: Record<string, unknown> | undefined;
    const event: ReceiverEvent = {
      body: args.body,
      ...(args.retry_num !== undefined ? { retryNum: args.retry_num } : {}),
      ...(args.retry_reason !== undefined ? { retryReason: args.retry_reason } : {}),
      ack: async (r?: unknown) => {
        if (r && typeof r === "object") response = r as Record<string, unknown>;
      },
    };
    try {
      await app?.processEvent(event);
    } catch (err) {
      log.warn({ err }, "slack socket envelope failed; left unacknowledged so Slack redelivers it");
      return;
    }
    await args.ack(response);
  });
  return {
    client: inner.client,
    init: (a) => {
      app = a;
      inner.init(a);
    },
    start: () => inner.start(),
    stop: () => inner.stop(),
  };
}
