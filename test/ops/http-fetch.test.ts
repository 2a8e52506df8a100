/**
 * fetch on undici's request API (src/ops/http-fetch.ts), against a local server: what the clients
 * read of a Response comes through (status, headers, the body as it streams), an abort ends a
 * request whose body is being read with an AbortError (the openai SDK tells cancellation by that
 * name), a body given up on ends the request, and a FormData goes as multipart. The clients over
 * it: test/llm/client.test.ts, test/slack (mention, uploads, rate-limits, timed-fetch).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { requestFetch } from "../../src/ops/http-fetch.js";

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = null;
});

async function serve(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void) {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => handler(req, body, res));
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/v1/chat/completions`;
}

describe("fetch on undici's request API", () => {
  it("sends method, headers and body; reads status, headers and the streamed body", async () => {
    const url = await serve((req, body, res) => {
      res.writeHead(201, { "content-type": "text/event-stream", "x-request-id": "req_1" });
      res.write(
        `data: ${JSON.stringify({ method: req.method, purpose: req.headers["x-neo-purpose"], body })}\n\n`,
      );
      res.end("data: [DONE]\n\n");
    });
    const res = await requestFetch()(url, {
      method: "POST",
      headers: new Headers({ "x-neo-purpose": "turn", "content-type": "application/json" }),
      body: '{"model":"m"}',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-request-id")).toBe("req_1");
    const text = await res.text();
    expect(text).toContain('"method":"POST"');
    expect(text).toContain('"purpose":"turn"');
    expect(text).toContain('"body":"{\\"model\\":\\"m\\"}"');
    expect(text).toContain("[DONE]");
  });

  it("sends headers given as a Headers object, a record or pairs as node's fetch sends them", async () => {
    const url = await serve((req, _body, res) => {
      const seen = Object.fromEntries(
        Object.entries(req.headers).filter(([name]) => name.startsWith("x-") || name === "authorization"),
      );
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(seen));
    });
    const given: RequestInit["headers"][] = [
      new Headers({ "X-Neo-Purpose": "turn", Authorization: "Bearer k" }),
      // The Web API client's shape: a record, names in any case (one twice, differing in case), values not all strings.
      { Authorization: "Bearer xoxb-1", "X-Count": 3 as unknown as string, "x-dup": "a", "X-Dup": " b " },
      [
        ["x-pair", "1"],
        ["X-Pair", "2"],
      ],
    ];
    const received = [];
    for (const headers of given) {
      const ours = await (await requestFetch()(url, { method: "POST", headers, body: "{}" })).json();
      const nodes = await (await fetch(url, { method: "POST", headers, body: "{}" })).json();
      expect(ours).toEqual(nodes);
      received.push(ours);
    }
    expect(received).toEqual([
      { "x-neo-purpose": "turn", authorization: "Bearer k" },
      { authorization: "Bearer xoxb-1", "x-count": "3", "x-dup": "a, b" },
      { "x-pair": "1, 2" },
    ]);
  });

  it("ends a request whose body is being read when its signal aborts, with an AbortError", async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    });
    const ctl = new AbortController();
    const res = await requestFetch()(url, { method: "POST", body: "{}", signal: ctl.signal });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: first\n\n");
    const next = reader.read();
    ctl.abort();
    const err = await next.catch((e: unknown) => e as Error);
    expect((err as Error).name).toBe("AbortError");
  });

  it("ends the request when its body is cancelled", async () => {
    let closed!: () => void;
    const gone = new Promise<void>((r) => {
      closed = r;
    });
    const url = await serve((_req, _body, res) => {
      res.on("close", closed);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    });
    const res = await requestFetch()(url, { method: "POST", body: "{}" });
    await res.body!.cancel();
    await gone;
  });

  it("answers a status without a body with none", async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(204);
      res.end();
    });
    const res = await requestFetch()(url, { method: "POST", body: "{}" });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it("sends a FormData as multipart, its boundary in the content-type", async () => {
    let seen = { type: "", body: "" };
    const url = await serve((req, body, res) => {
      seen = { type: req.headers["content-type"] ?? "", body };
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"ok":true}');
    });
    const form = new FormData();
    form.append("channels", "C1");
    form.append("file", new Blob([new Uint8Array(Buffer.from("file-bytes-here"))]), "a.bin");
    const res = await requestFetch()(url, { method: "POST", body: form });
    expect(await res.json()).toEqual({ ok: true });
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(seen.type)?.[1];
    expect(boundary).toBeDefined();
    expect(seen.body).toContain(`--${boundary}`);
    expect(seen.body).toContain('name="channels"');
    expect(seen.body).toContain("file-bytes-here");
  });
});
