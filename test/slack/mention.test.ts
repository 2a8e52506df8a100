/**
 * End to end on Slack: signed Events API requests into the real Bolt app, Web API calls recorded by
 * the fake Slack, the real loop answering from a scripted model.
 */
import { afterEach, describe, expect, it } from "vitest";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import { healthRoute } from "../../src/ops/health.js";
import { sign } from "../fakes/slack/signed-request.js";
import {
  envelope,
  type Harness,
  mention,
  SIGNING_SECRET,
  startHarness,
  until,
  userTs,
} from "./support/harness.js";

/** A POST to the harness's events endpoint with exactly these headers and body. */
async function post(h: Harness, body: string, headers: Record<string, string>, path = "/slack/events") {
  const res = await fetch(`http://127.0.0.1:${h.adapter.port()}${path}`, { method: "POST", headers, body });
  return { status: res.status, body: await res.text() };
}

describe("Slack mentions and DMs", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("answers a top-level mention in its thread, editing one status message and removing it", async () => {
    h = await startHarness({
      turns: [
        { label: "first tool", reply: { toolCalls: [{ name: "lookup", arguments: {} }] } },
        { label: "second tool", reply: { toolCalls: [{ name: "price", arguments: {} }] } },
        { label: "answer", reply: { text: "ETH is **3,000** today." } },
      ],
      tools: {
        lookup: () => ({ content: "found", isError: false }),
        // Hold the turn until the status edit for this tool reached Slack, so the edit is observable.
        price: async () => {
          await h!.fake.waitFor(() => h!.fake.callsTo("chat.update").length > 0, "status edit");
          return { content: "3000", isError: false };
        },
      },
    });
    const ts = userTs();
    const res = await h.slack.event(envelope(mention("C1", "UANN", "what is ETH at?", { ts })));
    expect(res.status).toBe(200);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.delete").length === 1, "status removed");

    const posts = h.fake.callsTo("chat.postMessage");
    expect(posts.map((p) => [p.args.channel, p.args.thread_ts])).toEqual([
      ["C1", ts],
      ["C1", ts],
    ]);
    expect(posts[0]!.args.text).toBe("_• lookup_");
    expect(posts[1]!.args.text).toBe("ETH is *3,000* today.");
    const statusTs = h.fake.calls.find((c) => c.method === "chat.postMessage")!;
    const edits = h.fake.callsTo("chat.update");
    expect(edits).toHaveLength(1);
    expect(edits[0]!.args.text).toBe("_• price_");
    // The status message is removed after the answer landed; the thread shows the answer only.
    const del = h.fake.callsTo("chat.delete")[0]!;
    expect(del.at).toBeGreaterThanOrEqual(posts[1]!.at);
    expect(h.fake.messages("C1", ts).map((m) => m.text)).toEqual(["ETH is *3,000* today."]);
    expect(statusTs.args.link_names).toBe("false");
    // The model heard who asked.
    const first = h.ep.requests[0]!;
    expect(first.messages.filter((m) => m.role === "user").map((m) => String(m.content))).toEqual([
      expect.stringContaining("what is ETH at?"),
    ]);
    expect(h.fake.violations()).toEqual([]);
  });

  it("answers a DM in the DM, unthreaded", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Hello Ann" } }] });
    const ts = userTs();
    const dm = {
      type: "message",
      channel_type: "im",
      channel: "D1",
      user: "UANN",
      text: "hi",
      ts,
      event_ts: ts,
    };
    expect((await h.slack.event(envelope(dm))).status).toBe(200);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "DM answer");
    const post = h.fake.callsTo("chat.postMessage")[0]!;
    expect(post.args.channel).toBe("D1");
    expect(post.args.thread_ts).toBeUndefined();
    expect(post.args.text).toBe("Hello Ann");
  });

  it("answers a retried delivery once, and the same message arriving as app_mention and message once", async () => {
    h = await startHarness({ turns: [{ reply: { text: "once" } }] });
    const ts = userTs();
    const event = mention("C1", "UANN", "hello", { ts });
    const env = envelope(event, "EvRETRY1");
    const [a, b] = await Promise.all([h.slack.event(env), h.slack.event(env, { retryNum: 1 })]);
    expect([a.status, b.status]).toEqual([200, 200]);
    // The same message delivered again as a `message` event with another event_id.
    const again = await h.slack.event(
      envelope({ ...event, type: "message", channel_type: "channel", text: "<@UNEO> hello" }, "EvOTHER"),
    );
    expect(again.status).toBe(200);
    const retry2 = await h.slack.event(env, { retryNum: 2 });
    expect(retry2.status).toBe(200);
    await h.fake.waitFor(
      () => h!.fake.callsTo("chat.postMessage").some((c) => c.args.text === "once"),
      "answer",
    );
    await until("idle", () => h!.conversations.stats().running === 0);
    expect(h.ep.requests).toHaveLength(1);
    expect(h.fake.callsTo("chat.postMessage").filter((c) => c.args.text === "once")).toHaveLength(1);
    // The journal took the message once (by its id); no event_id claim is kept for a message.
    expect(await h.store.keys("slack:event:")).toEqual([]);
  });

  it("answers a retry of a delivery a crash cut short (an event_id claim left behind does not swallow it)", async () => {
    h = await startHarness({ turns: [{ reply: { text: "after the crash" } }] });
    // What a process killed mid-delivery left: an in-flight claim for the event, nothing journaled.
    await h.store.set("slack:event:EvCUT", 1, 30_000);
    const res = await h.slack.event(envelope(mention("C1", "UANN", "are you there?"), "EvCUT"), {
      retryNum: 1,
    });
    expect(res.status).toBe(200);
    await h.fake.waitFor(
      () => h!.fake.callsTo("chat.postMessage").some((c) => c.args.text === "after the crash"),
      "answer to the retried delivery",
    );
    expect(h.ep.requests).toHaveLength(1);
  });

  it("still answers when users.info fails (the speaker is named by id, and the failure logged)", async () => {
    h = await startHarness({ turns: [{ reply: { text: "hi stranger" } }] });
    await h.slack.event(envelope(mention("C1", "UNOBODY", "who am I?")));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
    expect(JSON.stringify(h.ep.requests[0]!.messages)).toContain("who am I?");
    expect(h.fake.calls.filter((c) => c.method === "users.info").length).toBeGreaterThan(0);
  });

  it("answers 500 for a message it could not journal (shutting down), so Slack delivers it again", async () => {
    h = await startHarness();
    await h.conversations.shutdown(0);
    const res = await h.slack.event(envelope(mention("C1", "UANN", "late"), "EvLATE"));
    expect(res.status).toBe(500);
    // The event_id claim is released, so Slack's retry is processed rather than dropped.
    expect(await h.store.keys("slack:event:")).toEqual([]);
  });

  it("rejects a forged, stale or future-dated signature with 401 and never reaches Neo", async () => {
    h = await startHarness();
    const now = Math.floor(Date.now() / 1000);
    const forged = await h.slack.event(envelope(mention("C1", "UANN", "hi")), { secret: "not-the-secret" });
    const stale = await h.slack.event(envelope(mention("C1", "UANN", "hi")), { timestamp: now - 10 * 60 });
    // Correctly signed but dated 10 minutes ahead: a request made now to be replayed later would
    // pass a check of the past alone (Bolt checks only that).
    const future = await h.slack.event(envelope(mention("C1", "UANN", "hi")), { timestamp: now + 10 * 60 });
    expect([forged.status, stale.status, future.status]).toEqual([401, 401, 401]);
    expect(h.fake.calls.filter((c) => c.method !== "auth.test")).toEqual([]);
    expect(h.ep.requests).toHaveLength(0);
    expect(await h.store.keys("slack:event:")).toEqual([]);
  });

  it("refuses a missing, malformed or other version's signature, and a body changed after signing, with 401", async () => {
    h = await startHarness();
    const body = JSON.stringify(envelope(mention("C1", "UANN", "hi")));
    const ts = String(Math.floor(Date.now() / 1000));
    const good = sign(SIGNING_SECRET, Number(ts), body);
    const json = { "content-type": "application/json" };
    const statuses = [
      (await post(h, body, { ...json, "x-slack-request-timestamp": ts })).status,
      (await post(h, body, { ...json, "x-slack-signature": good })).status,
      (await post(h, body, { ...json, "x-slack-request-timestamp": ts, "x-slack-signature": "v0=abc" }))
        .status,
      (
        await post(h, body, {
          ...json,
          "x-slack-request-timestamp": ts,
          "x-slack-signature": good.replace("v0=", "v1="),
        })
      ).status,
      (
        await post(h, body.replace("hi", "ho"), {
          ...json,
          "x-slack-request-timestamp": ts,
          "x-slack-signature": good,
        })
      ).status,
      (await post(h, body, { ...json, "x-slack-request-timestamp": `${ts}.5`, "x-slack-signature": good }))
        .status,
    ];
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
    // Signed right, the same bytes are taken (and a query string does not move the endpoint).
    const ok = await post(
      h,
      body,
      { ...json, "x-slack-request-timestamp": ts, "x-slack-signature": good },
      "/slack/events?x=1",
    );
    expect(ok.status).toBe(200);
  });

  it("refuses a signature of the right length in characters but not in bytes with 401, and keeps serving", async () => {
    // A header byte past ASCII arrives as one latin1 character: 67 characters, 68 bytes in UTF-8.
    // Compared as UTF-8 buffers of unequal length, timingSafeEqual throws; an unauthenticated
    // request must not be able to make the check throw (an unhandled rejection ends the process).
    h = await startHarness({ turns: [{ reply: { text: "Hi." } }] });
    const body = JSON.stringify(envelope(mention("C1", "UANN", "hi")));
    const ts = String(Math.floor(Date.now() / 1000));
    const good = sign(SIGNING_SECRET, Number(ts), body);
    const odd = `${good.slice(0, -1)}\u00e9`;
    expect(odd.length).toBe(good.length);
    const res = await post(h, body, {
      "content-type": "application/json",
      "x-slack-request-timestamp": ts,
      "x-slack-signature": odd,
    });
    expect(res.status).toBe(401);
    const after = await h.slack.event(envelope(mention("C1", "UANN", "hi")));
    expect(after.status).toBe(200);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
  });

  it("answers an unsigned ssl_check and runs nothing else its body carried; a body over Bolt's limit gets 413", async () => {
    h = await startHarness();
    const command = new URLSearchParams({
      ssl_check: "1",
      command: "/neo",
      text: "help",
      team_id: "T0001",
      user_id: "UANN",
      channel_id: "C1",
      response_url: "http://127.0.0.1:1/none",
    }).toString();
    const check = await post(h, command, { "content-type": "application/x-www-form-urlencoded" });
    // Bolt's answer to a certificate check: 200 and nothing else (the command was not run).
    expect(check).toEqual({ status: 200, body: "" });
    const big = "x".repeat(4 * 1024 * 1024 + 1);
    const ts = Math.floor(Date.now() / 1000);
    const tooLarge = await post(h, big, {
      "content-type": "application/json",
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": sign(SIGNING_SECRET, ts, big),
    });
    expect(tooLarge.status).toBe(413);
    expect(h.fake.calls.filter((c) => c.method !== "auth.test")).toEqual([]);
  });

  it("serves a request dated a minute ahead (clock skew within five minutes)", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Hi." } }] });
    const res = await h.slack.event(envelope(mention("C1", "UANN", "hi")), {
      timestamp: Math.floor(Date.now() / 1000) + 60,
    });
    expect(res.status).toBe(200);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
  });

  it("neutralises <!channel>, <!here>, <!everyone>, user-group and user pings in the answer", async () => {
    h = await startHarness({
      turns: [{ reply: { text: "Hey <!channel> and <!here|here>, @everyone, <!subteam^S123> & <@U999>" } }],
    });
    await h.slack.event(envelope(mention("C1", "UANN", "ping everyone")));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
    const text = String(h.fake.callsTo("chat.postMessage")[0]!.args.text);
    expect(text).not.toMatch(/<!|<@/);
    expect(text).toContain("&lt;!channel&gt;");
    expect(text).toContain("&lt;!subteam^S123&gt;");
    expect(text).toContain("&amp;");
    expect(text).not.toMatch(/@everyone\b/);
    expect(h.fake.callsTo("chat.postMessage")[0]!.args.parse).toBe("none");
  });

  it("splits a long answer with code into readable messages, each with balanced fences", async () => {
    const code = Array.from(
      { length: 150 },
      (_, i) => `const line${i} = "${"x".repeat(20)}"; // <${i}>`,
    ).join("\n");
    const answer = `Here is the file:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat's it.`;
    // Splitting is the subject: code blocks stay in the answer (not sent as files).
    h = await startHarness({
      turns: [{ reply: { text: answer } }],
      limits: { answerFile: { maxChars: 0, codeLines: 0 } },
    });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "show me", { ts })));
    await h.fake.waitFor(
      () => h!.fake.callsTo("chat.postMessage").some((c) => String(c.args.text).includes("That's it.")),
      "last part",
    );
    const parts = h.fake.callsTo("chat.postMessage").map((c) => String(c.args.text));
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(3000);
      expect((p.match(/```/g) ?? []).length % 2).toBe(0);
      expect(h.fake.callsTo("chat.postMessage").every((c) => c.args.thread_ts === ts)).toBe(true);
    }
    // Every code line arrives exactly once, escaped, in order.
    const joined = parts.join("\n");
    for (let i = 0; i < 150; i++) expect(joined.split(`// &lt;${i}&gt;`).length - 1).toBe(1);
    expect(joined.indexOf("line0 ")).toBeLessThan(joined.indexOf("line149 "));
  });

  it("brings earlier human messages of the thread as context when mentioned inside it", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Got the context" } }] });
    const root = h.fake.seedMessage({
      channel: "C2",
      user: "UBOB",
      text: "the deploy failed with &lt;E42&gt;",
    });
    h.fake.seedMessage({ channel: "C2", thread_ts: root.ts, user: "UANN", text: "same here" });
    h.fake.seedMessage({
      channel: "C2",
      thread_ts: root.ts,
      user: "UOTHERBOT",
      bot_id: "B9",
      text: "bot noise",
    });
    const ts = userTs().replace("1690000000", "1800000000");
    await h.slack.event(envelope(mention("C2", "UANN", "what went wrong?", { ts, thread_ts: root.ts })));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
    expect(h.fake.callsTo("chat.postMessage")[0]!.args.thread_ts).toBe(root.ts);
    const seen = JSON.stringify(h.ep.requests[0]!.messages);
    expect(seen).toContain("Bob: the deploy failed with <E42>");
    expect(seen).toContain("Ann: same here");
    expect(seen).not.toContain("bot noise");
  });

  it("serves a mounted /healthz on the receiver's port, and no /metrics there", async () => {
    h = await startHarness({ customRoutes: [healthRoute([{ name: "slack", check: () => ({ ok: true }) }])] });
    const res = await fetch(`http://127.0.0.1:${h.adapter.port()}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok", checks: { slack: { ok: true } } });
    expect((await fetch(`http://127.0.0.1:${h.adapter.port()}/metrics`)).status).toBe(404);
  });

  it("ignores denied users, bot messages, edits and Neo's own posts, with a debug line saying why", async () => {
    const lines: string[] = [];
    setLogSink((l) => lines.push(l));
    setLogLevel("debug");
    h = await startHarness();
    const base = { type: "message", channel_type: "im", channel: "D1", ts: userTs() };
    await h.access.deny(`slack:T0001:UBOB`, "slack:T0001:UADMIN");
    for (const e of [
      { ...base, user: "UBOB", text: "let me in" },
      { ...base, user: "UNEO", text: "my own" },
      { ...base, bot_id: "B9", subtype: "bot_message", text: "a bot" },
      { ...base, subtype: "message_changed", message: { text: "edited" } },
      { ...base, subtype: "message_deleted" },
    ]) {
      expect((await h.slack.event(envelope(e))).status).toBe(200);
    }
    expect(h.ep.requests).toHaveLength(0);
    expect(h.fake.calls.filter((c) => c.method === "chat.postMessage")).toEqual([]);
    const reasons = lines.map((l) => JSON.parse(l) as { msg: string }).map((l) => l.msg);
    for (const why of [
      "user is not allowed to use Neo",
      "Neo's own post",
      "bot message (not in NEO_ANSWER_BOTS)",
      "message edit",
      "message deletion",
    ]) {
      expect(reasons).toContain(`ignored: ${why}`);
    }
    setLogLevel("silent");
  });
});
