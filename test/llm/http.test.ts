/**
 * The model client's HTTP (src/core/llm/http.ts), against a local server: what the openai SDK reads
 * of a Response comes through (status, headers, the body as it streams), the SDK's abort ends a
 * request whose body is being read with an AbortError (the SDK tells cancellation by that name),
 * and a body given up on ends the request. The SDK over it: test/llm/client.test.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { modelFetch } from "../../src/core/llm/http.js";

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

describe("the model client's fetch", () => {
  it("sends method, headers and body; reads status, headers and the streamed body", async () => {
    const url = await serve((req, body, res) => {
      res.writeHead(201, { "content-type": "text/event-stream", "x-request-id": "req_1" });
      res.write(
        `data: ${JSON.stringify({ method: req.method, purpose: req.headers["x-neo-purpose"], body })}\n\n`,
      );
      res.end("data: [DONE]\n\n");
    });
    const res = await modelFetch()(url, {
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

  it("ends a request whose body is being read when its signal aborts, with an AbortError", async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    });
    const ctl = new AbortController();
    const res = await modelFetch()(url, { method: "POST", body: "{}", signal: ctl.signal });
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
    const res = await modelFetch()(url, { method: "POST", body: "{}" });
    await res.body!.cancel();
    await gone;
  });

  it("answers a status without a body with none", async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(204);
      res.end();
    });
    const res = await modelFetch()(url, { method: "POST", body: "{}" });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });
});
