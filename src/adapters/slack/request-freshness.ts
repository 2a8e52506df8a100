/**
 * Slack signs `v0:<timestamp>:<body>` and asks receivers to refuse requests whose timestamp is more
 * than five minutes from their clock. Bolt's HTTP receiver refuses only the past, so a request dated
 * ahead stays valid until its date plus five minutes: one captured (or made with a leaked secret)
 * could be replayed long after. This check refuses the future side with the same 401, before Bolt
 * reads the body.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HTTPReceiver } from "@slack/bolt";
import { log } from "../../core/log.js";

/** Slack's documented tolerance, each way. */
export const MAX_CLOCK_SKEW_SECONDS = 5 * 60;

/** True when the request carries a Slack timestamp more than five minutes ahead of `nowMs`. */
export function isFutureDated(headers: IncomingMessage["headers"], nowMs: number): boolean {
  const raw = headers["x-slack-request-timestamp"];
  const ts = Number(Array.isArray(raw) ? raw[0] : raw);
  return Number.isFinite(ts) && ts > Math.floor(nowMs / 1000) + MAX_CLOCK_SKEW_SECONDS;
}

/** Make `receiver` answer 401 to future-dated requests; everything else goes to Bolt as before. */
export function refuseFutureDated(receiver: HTTPReceiver, now: () => number = Date.now): void {
  const bolt = receiver.requestListener;
  receiver.requestListener = (req: IncomingMessage, res: ServerResponse) => {
    if (!isFutureDated(req.headers, now())) return bolt(req, res);
    log.warn({ path: req.url }, "refused a Slack request dated more than five minutes ahead");
    // Bolt's own answer to a stale or badly signed request: 401 with no body.
    res.writeHead(401);
    res.end();
  };
}
