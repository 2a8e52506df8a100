/**
 * Requests to a Bolt HTTP receiver signed the way Slack signs them: `v0=` + HMAC-SHA256 of
 * `v0:<timestamp>:<body>` with the signing secret. Options forge or age a request for negative tests.
 */
import { createHmac } from "node:crypto";

export interface SignOptions {
  /** Seconds since epoch; default now. Use an old value for a stale request. */
  timestamp?: number;
  /** Sign with this secret instead (a forged request). */
  secret?: string;
  /** Sent as X-Slack-Retry-Num (and X-Slack-Retry-Reason). */
  retryNum?: number;
}

export interface SlackResponse {
  status: number;
  body: string;
}

export function sign(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

export interface SlackSender {
  /** An Events API envelope (`event_callback`). */
  event(envelope: Record<string, unknown>, opts?: SignOptions): Promise<SlackResponse>;
  /** An interactivity payload (block_actions), form-encoded as `payload=<json>`. */
  action(payload: Record<string, unknown>, opts?: SignOptions): Promise<SlackResponse>;
  /** A slash command, form-encoded. */
  command(fields: Record<string, string>, opts?: SignOptions): Promise<SlackResponse>;
}

export function createSlackSender(url: string, signingSecret: string): SlackSender {
  const send = async (body: string, type: string, opts: SignOptions = {}): Promise<SlackResponse> => {
    const ts = opts.timestamp ?? Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      "content-type": type,
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": sign(opts.secret ?? signingSecret, ts, body),
    };
    if (opts.retryNum !== undefined) {
      headers["x-slack-retry-num"] = String(opts.retryNum);
      headers["x-slack-retry-reason"] = "http_timeout";
    }
    const res = await fetch(url, { method: "POST", headers, body });
    return { status: res.status, body: await res.text() };
  };
  return {
    event: (envelope, opts) => send(JSON.stringify(envelope), "application/json", opts),
    action: (payload, opts) =>
      send(
        new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
        "application/x-www-form-urlencoded",
        opts,
      ),
    command: (fields, opts) =>
      send(new URLSearchParams(fields).toString(), "application/x-www-form-urlencoded", opts),
  };
}
