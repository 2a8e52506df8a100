/**
 * How messages reach the bot, the way each platform delivers them:
 * - Slack: signed Events API requests (test/fakes/slack/signed-request.ts signing). Like Slack, a
 *   delivery that is not answered 2xx within 3 s is retried with the same event_id and
 *   `X-Slack-Retry-Num` — at once, then after 5 s and 25 s (Slack: at once, +1 min, +5 min; scaled
 *   down so a run stays short), then given up.
 * - Discord: MESSAGE_CREATE dispatched on the fake gateway to whichever bot session is connected;
 *   like Discord, nothing is redelivered to a session that was not connected.
 */

import type { ChannelPayload } from "../../test/fakes/discord/payloads.js";
import { sign } from "../../test/fakes/slack/signed-request.js";
import type { Ledger } from "./ledger.js";
import { question } from "./model.js";
import { sleep } from "./procs.js";
import type { Stack } from "./stack.js";
import { SLACK_USERS } from "./stack.js";

export const SLACK_ACK_TIMEOUT_MS = 3000;
export const SLACK_RETRY_DELAYS_MS = [0, 5000, 25_000];

export interface DeliveryStats {
  /** HTTP attempts, including retries. */
  attempts: number;
  /** Attempts that failed (refused, cut, 5xx, or no 2xx within 3 s). */
  failed: number;
  /** Deliveries abandoned after the last retry. */
  gaveUp: number;
}

export interface SlackDelivery {
  stats: DeliveryStats;
  /** Deliver one envelope; resolves once acknowledged or given up. `onAttempt` hears each outcome. */
  deliver(envelope: Record<string, unknown>, onAttempt?: (outcome: string) => void): Promise<boolean>;
}

/** `target` names the bot URL for each attempt: a fleet's load balancer picks one per attempt. */
export function createSlackDelivery(target: () => string, secret: string): SlackDelivery {
  const stats: DeliveryStats = { attempts: 0, failed: 0, gaveUp: 0 };
  const attempt = async (body: string, retryNum: number, note: (o: string) => void): Promise<boolean> => {
    const ts = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": sign(secret, ts, body),
    };
    if (retryNum > 0) {
      headers["x-slack-retry-num"] = String(retryNum);
      headers["x-slack-retry-reason"] = "http_timeout";
    }
    stats.attempts++;
    try {
      const res = await fetch(target(), {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.timeout(SLACK_ACK_TIMEOUT_MS),
      });
      await res.arrayBuffer();
      note(String(res.status));
      if (res.ok) return true;
    } catch (err) {
      // Refused (bot down), cut (killed mid-request) or timed out: all failed deliveries for Slack.
      const code = ((err as Error).cause as { code?: string } | undefined)?.code;
      note((err as Error).name === "TimeoutError" ? "timeout" : code === "ECONNREFUSED" ? "refused" : "cut");
    }
    stats.failed++;
    return false;
  };
  return {
    stats,
    async deliver(envelope, onAttempt = () => {}) {
      const body = JSON.stringify(envelope);
      if (await attempt(body, 0, onAttempt)) return true;
      for (let i = 0; i < SLACK_RETRY_DELAYS_MS.length; i++) {
        await sleep(SLACK_RETRY_DELAYS_MS[i]!);
        if (await attempt(body, i + 1, onAttempt)) return true;
      }
      stats.gaveUp++;
      return false;
    },
  };
}

let eventSeq = 0;

export function envelope(teamId: string, event: Record<string, unknown>): Record<string, unknown> {
  return {
    token: "legacy",
    team_id: teamId,
    api_app_id: "ABENCH",
    type: "event_callback",
    event_id: `EvBench${++eventSeq}`,
    event_time: Math.floor(Date.now() / 1000),
    event,
  };
}

/** A conversation a driver keeps open: where its next message goes. */
export interface Conversation {
  name: string;
  platform: "slack" | "discord";
  index: number;
  /** Discord: the thread once Neo opened it. */
  thread?: ChannelPayload;
  /** Discord: the id of the message that should have opened the thread. */
  opener?: string;
}

/** Send one message of a conversation; records it in the ledger just before it leaves. */
export async function sendMessage(
  stack: Stack,
  delivery: SlackDelivery,
  conv: Conversation,
  token: string,
): Promise<void> {
  const ledger: Ledger = stack.ledger;
  const text = question(token);
  if (conv.platform === "slack") {
    const user = SLACK_USERS[conv.index % SLACK_USERS.length]!.id;
    // From the fake's clock, as Slack stamps messages: Neo's answer is after it (a resumed turn
    // looks for what it already posted after its opening message).
    const ts = stack.slack.nextTs();
    const channel = conv.name.slice("slack:".length);
    const event = { type: "message", channel_type: "im", channel, user, text, ts, event_ts: ts };
    const sent = ledger.send(token, "slack", conv.name);
    sent.deliveries = [];
    void delivery.deliver(envelope(stack.slack.teamId, event), (o) => sent.deliveries!.push(o));
    return;
  }
  const d = stack.discord;
  const author = [d.alice, d.bob, d.carol][conv.index % 3]!;
  if (!conv.thread && conv.opener) conv.thread = d.channelById(conv.opener);
  ledger.send(token, "discord", conv.name);
  if (conv.thread) {
    await d.say(author, conv.thread, text);
    return;
  }
  // No thread yet (first message, or the opener was never answered): a mention opens one.
  const msg = await d.say(author, d.channel, text, { mentionBot: true });
  conv.opener = msg.id;
  ledger.alias(conv.name, `discord:${msg.id}`);
}
