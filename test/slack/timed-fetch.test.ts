/**
 * The Web API client's time limit (src/adapters/slack/adapter/timed-fetch.ts): a call not answered,
 * or whose answer's body is not read, within the limit fails with a TimeoutError; a call answered
 * and read leaves nothing behind to abort it later (the client's own `timeout` aborted every
 * finished call's signal when its timer ran out).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fetchWithin } from "../../src/adapters/slack/adapter/timed-fetch.js";

let server: Server | null = null;
afterEach(async () => {
  vi.useRealTimers();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = null;
});

/** A local server that never answers. */
async function stalling(): Promise<string> {
  server = createServer(() => {});
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat.postMessage`;
}

describe("Slack Web API calls: the time limit", () => {
  it("a call not answered within the limit fails with a TimeoutError", async () => {
    const url = await stalling();
    await expect(fetchWithin(50)(url, { method: "POST", body: "a=b" })).rejects.toMatchObject({
      name: "TimeoutError",
    });
  });

  it("the limit holds while the answer's body is read", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    // Answered at once, its body never ending: the body fails with the signal's reason once it is
    // aborted, as fetch's body does.
    const inner: typeof fetch = async (_input, init) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"ok":'));
          init!.signal!.addEventListener("abort", () => controller.error(init!.signal!.reason));
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
    };
    const res = await fetchWithin(50, inner)("http://slack.invalid/api/a", { method: "POST" });
    const reading = res.text();
    vi.advanceTimersByTime(50);
    await expect(reading).rejects.toMatchObject({ name: "TimeoutError" });
  });

  it("a call answered and read is never aborted afterwards", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const signals: AbortSignal[] = [];
    const inner: typeof fetch = async (_input, init) => {
      signals.push(init!.signal!);
      return new Response('{"ok":true}', { status: 200, headers: { "content-type": "application/json" } });
    };
    const call = fetchWithin(10_000, inner);
    expect(await (await call("http://slack.invalid/api/a", { method: "POST" })).text()).toBe('{"ok":true}');
    expect(Buffer.from(await (await call("http://slack.invalid/api/b")).arrayBuffer()).toString()).toBe(
      '{"ok":true}',
    );
    vi.advanceTimersByTime(20_000);
    expect(signals.map((s) => s.aborted)).toEqual([false, false]);
  });
});
