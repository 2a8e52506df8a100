/**
 * Slack's request signature, checked before Bolt sees a request to the events endpoint (Bolt's
 * receiver runs with `signatureVerification: false`). Slack signs `v0:<timestamp>:<body>` with the
 * signing secret (HMAC-SHA256) and asks receivers to refuse requests whose timestamp is more than
 * five minutes from their clock, either way. Bolt's own check refused only the past, and compared
 * signatures with `tsscmp` (16 random bytes and two more HMACs per request, ~0.1 ms of CPU per
 * message in a profile of the bench); here the digests are compared with `timingSafeEqual`.
 * A refused request gets Bolt's answer: 401 with no body (413 past Bolt's body limit).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "node:querystring";
import type { HTTPReceiver } from "@slack/bolt";
import { log } from "../../core/log.js";

/** Slack's documented tolerance, each way. */
export const MAX_CLOCK_SKEW_SECONDS = 5 * 60;
/** Where Slack posts events, commands and interactions (Bolt's default endpoint). */
export const EVENTS_PATH = "/slack/events";
/** Bolt's limit on a request body (its `defaultBodyLimit`). */
export const BODY_LIMIT = 4 * 1024 * 1024;

const FORM = "application/x-www-form-urlencoded";

/** The one header value named `name`, or undefined (absent, or sent more than once). */
function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return typeof v === "string" ? v : undefined;
}

/**
 * Whether `body` carries Slack's signature of it made with `secret` and dated within five minutes
 * of `nowMs`, either way: one dated ahead would otherwise stay valid until its date plus five
 * minutes, so one captured (or made with a leaked secret) could be replayed long after.
 */
export function signedBySlack(
  headers: IncomingHttpHeaders,
  body: Buffer,
  secret: string,
  nowMs: number,
): boolean {
  const signature = single(headers, "x-slack-signature");
  const timestamp = single(headers, "x-slack-request-timestamp");
  if (signature === undefined || timestamp === undefined) return false;
  const ts = Number(timestamp);
  if (!Number.isFinite(ts) || Math.abs(ts - Math.floor(nowMs / 1000)) > MAX_CLOCK_SKEW_SECONDS) return false;
  const ours = Buffer.from(
    `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:`).update(body).digest("hex")}`,
  );
  // Compared as bytes, lengths first: timingSafeEqual throws on unequal lengths, and a header
  // character past ASCII is one character but two bytes (a digest's length is no secret).
  const given = Buffer.from(signature);
  return given.length === ours.length && timingSafeEqual(given, ours);
}

/** The body, or "too large" past `limit` bytes (declared or read). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | "too large"> {
  if (Number(req.headers["content-length"]) > limit) return Promise.resolve("too large");
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        settled = true;
        req.off("data", onData);
        req.pause();
        resolve("too large");
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => {
      settled = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.once("error", reject);
    // Cut before its end. Every request closes, so the error (a stack to capture) is made only then.
    req.once("close", () => {
      if (!settled) reject(new Error("the request was cut before its body ended"));
    });
  });
}

/**
 * An `ssl_check` (a form post Slack sends unsigned to test the certificate) passes with nothing
 * else in its body, as Bolt lets it: what else it carried is dropped, never run unsigned.
 */
function sslCheck(req: IncomingMessage, body: Buffer): Buffer | undefined {
  if (req.headers["content-type"] !== FORM) return undefined;
  return parseQuery(body.toString()).ssl_check === "1" ? Buffer.from("ssl_check=1") : undefined;
}

function refuse(res: ServerResponse, status: 401 | 413, why: string, path: string): void {
  log.warn({ path }, why);
  res.writeHead(status);
  res.end();
}

/**
 * Make `receiver` check Slack's signature of every POST to `EVENTS_PATH` (the requests Bolt would
 * check) and hand Bolt the body it read (`rawBody`, which Bolt reads instead of the stream).
 * Everything else (the OAuth install pages, custom routes) goes to Bolt as before.
 */
export function checkSlackSignatures(
  receiver: HTTPReceiver,
  secret: string,
  now: () => number = Date.now,
): void {
  const bolt = receiver.requestListener;
  receiver.requestListener = (req: IncomingMessage, res: ServerResponse) => {
    // The path as Bolt routes it (the same parse), so no request Bolt treats as an event skips this.
    const path = new URL(req.url ?? "", "http://localhost").pathname;
    if (req.method?.toUpperCase() !== "POST" || path !== EVENTS_PATH) return bolt(req, res);
    readBody(req, BODY_LIMIT)
      .then(
        (body) => {
          if (body === "too large")
            return refuse(res, 413, "refused a Slack request over the body limit", path);
          const checked = sslCheck(req, body);
          if (!checked && !signedBySlack(req.headers, body, secret, now()))
            return refuse(
              res,
              401,
              "refused a Slack request: bad signature, or dated over five minutes off",
              path,
            );
          Object.assign(req, { rawBody: checked ?? body });
          bolt(req, res);
        },
        (err: unknown) => {
          log.warn({ err, path }, "a Slack request's body could not be read");
          if (!res.headersSent)
            refuse(res, 401, "refused a Slack request whose body could not be read", path);
        },
      )
      // Outside the server's own try/catch (Bolt's dispatch error handler sees only synchronous
      // throws): a throw here would be an unhandled rejection, which ends the process.
      .catch((err: unknown) => {
        log.error({ err, path }, "a Slack request failed in its signature check");
        if (!res.headersSent) {
          res.writeHead(500);
          res.end();
        }
      });
  };
}
