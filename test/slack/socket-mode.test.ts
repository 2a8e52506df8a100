/** Socket Mode: the real Bolt SocketModeReceiver opens its WebSocket via apps.connections.open at SLACK_API_URL. */
import { afterEach, describe, expect, it } from "vitest";
import { conversationKey } from "../../src/core/keys.js";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import { envelope, type Harness, mention, startHarness, until, userTs } from "./support/harness.js";

describe("Slack Socket Mode", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("connects through SLACK_API_URL and answers a mention delivered over the socket", async () => {
    h = await startHarness({ socketMode: true, turns: [{ reply: { text: "over the socket" } }] });
    expect(h.adapter.mode).toBe("socket");
    await until("socket connected", () => h!.adapter.connected());
    expect(h.fake.calls.map((c) => c.method)).toContain("apps.connections.open");
    const ts = userTs();
    await h.fake.socketSend(envelope(mention("C3", "UANN", "hello", { ts })));
    // Acknowledged only once the message was journaled.
    const conversation = conversationKey({
      platform: "slack",
      workspace: "T0001",
      channel: "C3",
      thread: ts,
    });
    expect(await h.store.keys(`conv:seen:{${conversation}}:T0001/C3/${ts}`)).toHaveLength(1);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
    expect(h.fake.callsTo("chat.postMessage")[0]!.args).toMatchObject({
      channel: "C3",
      thread_ts: ts,
      text: "over the socket",
    });
  });

  it("leaves an envelope it could not journal unacknowledged, so Slack redelivers it", async () => {
    const lines: string[] = [];
    setLogSink((l) => lines.push(l));
    setLogLevel("warn");
    h = await startHarness({ socketMode: true });
    await until("socket connected", () => h!.adapter.connected());
    await h.conversations.shutdown(0);
    let acked = false;
    void h.fake.socketSend(envelope(mention("C3", "UANN", "late"))).then(() => {
      acked = true;
    });
    await until("the failure is logged", () => lines.some((l) => l.includes("left unacknowledged")));
    expect(acked).toBe(false);
    expect(await h.store.keys("slack:event:")).toEqual([]);
    setLogLevel("silent");
  });
});
