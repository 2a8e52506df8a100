/**
 * `fetch` made on undici's `request` (the dispatcher API), through an HTTP agent of its own, for
 * the clients that take a fetch and read back only a Response's status, headers and body: the openai
 * SDK (src/core/llm/client.ts) and the Slack Web API client (src/adapters/slack/adapter/bolt-app.ts).
 * node's fetch builds its Request and Response through the WHATWG machinery (header lists, the
 * signal followed twice, a body stream per side), most of a call's own CPU: bench/llm-replay.ts, a
 * model call ~0.4 ms less (a fifth); a Slack post ~0.29 ms less (933 -> 611 µs; figures in the commits).
 *
 * What the clients hand over: a method, headers, a string body or a FormData (a Slack upload:
 * encoded as multipart by the platform's Response, boundary in its content-type), and a signal
 * (timeouts, cancellation), which ends the request and its body as fetch's would (AbortError).
 * What fetch did on its own and this does not: follow redirects (a 3xx is handed back as any other
 * status), ask for compressed answers (none is asked, so none is sent), and give the response its
 * URL (`url` is ""; the Web API client reads it for admin.analytics.getFile only).
 */
import type { Readable } from "node:stream";
import { Agent, request } from "undici";

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * The request's headers as undici takes them: a record, names in lower case. Read straight from the
 * Headers object the openai SDK hands over, and from the record the Web API client does, not through
 * a new Headers (which validates every pair again): 8 -> 2 µs a call hot, 60 -> 26 µs after the
 * process sat idle 10 ms, as every message finds it one at a time (undici validates what it sends).
 * Names differing only in case are joined as Headers would join them.
 */
function headerRecord(h: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  if (h === undefined) return out;
  if (h instanceof Headers) {
    h.forEach((value, name) => {
      out[name] = value;
    });
    return out;
  }
  if (Array.isArray(h)) {
    for (const [name, value] of new Headers(h)) out[name] = value;
    return out;
  }
  for (const [name, value] of Object.entries(h)) {
    const key = name.toLowerCase();
    const v = String(value).trim();
    out[key] = key in out ? `${out[key]}, ${v}` : v;
  }
  return out;
}

/** The answer's headers as the clients read them (`get`, `entries`). */
function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else if (value !== undefined) out.append(name, value);
  }
  return out;
}

/**
 * The answer's body as the web stream a Response holds, read as the client reads (pulled);
 * cancelling it (the openai SDK does for an answer it retries) ends the request. Not `Readable.toWeb`: on node 20 a
 * cancelled one still writes to its closed controller, an unhandled error.
 */
function webBody(body: Readable): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      cancel() {
        // Ends the request; the abort error that makes is of no use to a reader who left.
        body.on("error", () => undefined);
        body.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}

/** The body undici sends, and the content-type it comes with when the fetch caller could not know it. */
async function requestBody(
  body: RequestInit["body"],
): Promise<{ bytes: string | Buffer | null; type?: string }> {
  if (body == null || typeof body === "string") return { bytes: body ?? null };
  if (body instanceof FormData) {
    const encoded = new Response(body);
    return {
      bytes: Buffer.from(await encoded.arrayBuffer()),
      type: encoded.headers.get("content-type") ?? undefined,
    };
  }
  throw new TypeError("requestFetch sends a string or FormData body");
}

export function requestFetch(): typeof fetch {
  const dispatcher = new Agent();
  return async (input, init = {}) => {
    const headers = headerRecord(init.headers);
    const body = await requestBody(init.body);
    if (body.type && !headers["content-type"]) headers["content-type"] = body.type;
    const res = await request(String(input), {
      dispatcher,
      method: (init.method ?? "GET") as "GET",
      headers,
      body: body.bytes,
      signal: init.signal ?? null,
    });
    const answer = responseHeaders(res.headers);
    if (NULL_BODY.has(res.statusCode)) {
      await res.body.dump();
      return new Response(null, { status: res.statusCode, headers: answer });
    }
    return new Response(webBody(res.body), { status: res.statusCode, headers: answer });
  };
}
