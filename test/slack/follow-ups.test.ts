/**
 * Follow-ups on Slack (issue 15 item 2): in a thread where Neo has answered, a message needs no
 * mention; elsewhere a channel message without one is ignored; a reply in a thread under Neo's DM
 * answer continues that DM's conversation. Real Bolt app, fake Slack, real loop.
 *
 * Payload shapes: channel messages as the Events API delivers them for `message.channels` /
 * `message.groups` (https://api.slack.com/events/message, "Threaded messages": type, channel,
 * channel_type "channel" / "group" / "im", user, text, ts, thread_ts, parent_user_id, event_ts);
 * a mention arrives both as that `message` and as `app_mention`
 * (https://api.slack.com/events/app_mention).
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SLACK_BOT_SCOPES } from "../../src/adapters/slack/installations.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { DEFAULT_USERS, envelope, type Harness, startHarness } from "./support/harness.js";

const USERS = [...DEFAULT_USERS, { id: "UCAROL", name: "carol", display_name: "Carol" }];
let seq = 0;
const nextTs = (): string => `1800000100.${String(++seq).padStart(6, "0")}`;

/** A `message` event: a channel message (or a reply in `threadTs`) as `message.channels` sends it. */
function channelMessage(
  channel: string,
  user: string,
  text: string,
  o: { threadTs?: string; parent?: string; channelType?: string; ts?: string } = {},
) {
  const ts = o.ts ?? nextTs();
  return {
    type: "message",
    channel,
    channel_type: o.channelType ?? "channel",
    user,
    text,
    ts,
    event_ts: ts,
    ...(o.threadTs ? { thread_ts: o.threadTs, parent_user_id: o.parent ?? "UANN" } : {}),
  };
}

const turnRequests = (h: Harness): ScriptedRequest[] => h.ep.requests.filter((r) => r.purpose === "turn");
const sent = (req: ScriptedRequest): string => JSON.stringify(req.messages);

describe("Slack follow-ups", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("answers a follow-up without a mention in Neo's thread, and not one in a thread Neo never joined", async () => {
    h = await startHarness({
      users: USERS,
      turns: [{ reply: { text: "first answer" } }, { reply: { text: "follow-up answer" } }],
    });
    const root = nextTs();
    const mention = { ...channelMessage("C1", "UANN", "<@UNEO> is the build green?", { ts: root }) };
    // Slack sends a mention twice: as the channel message and as app_mention (one answer).
    await h.slack.event(envelope(mention));
    await h.slack.event(envelope({ ...mention, type: "app_mention", channel_type: undefined }));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "first answer");

    // Carol's thread elsewhere, never addressed to Neo, and a top-level message: not answered.
    const other = nextTs();
    await h.slack.event(envelope(channelMessage("C1", "UCAROL", "lunch at noon?", { ts: other })));
    await h.slack.event(
      envelope(channelMessage("C1", "UBOB", "sure", { threadTs: other, parent: "UCAROL" })),
    );
    // Bob follows up in Neo's thread without a mention: answered there.
    await h.slack.event(
      envelope(channelMessage("C1", "UBOB", "and the nightly one?", { threadTs: root, parent: "UANN" })),
    );
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 2, "follow-up answer");
    const posts = h.fake.callsTo("chat.postMessage");
    expect(posts.map((p) => [p.args.thread_ts, p.args.text])).toEqual([
      [root, "first answer"],
      [root, "follow-up answer"],
    ]);
    const reqs = turnRequests(h);
    expect(reqs).toHaveLength(2);
    expect(sent(reqs[1]!)).toContain("Bob: and the nightly one?");
    for (const r of reqs) {
      expect(sent(r)).not.toContain("lunch at noon");
      expect(sent(r)).not.toContain("sure");
    }
  });

  it("answers follow-ups in a private channel thread (message.groups) too", async () => {
    h = await startHarness({
      users: USERS,
      channels: [{ id: "G1", name: "ops", is_private: true }],
      turns: [{ reply: { text: "on it" } }, { reply: { text: "done" } }],
    });
    const root = nextTs();
    await h.slack.event(
      envelope(
        channelMessage("G1", "UANN", "<@UNEO> restart the runner", { ts: root, channelType: "group" }),
      ),
    );
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "first answer");
    await h.slack.event(
      envelope(channelMessage("G1", "UANN", "thanks, is it up?", { threadTs: root, channelType: "group" })),
    );
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 2, "follow-up answer");
    expect(h.fake.callsTo("chat.postMessage")[1]!.args).toMatchObject({ channel: "G1", thread_ts: root });
  });

  it("a reply in a thread under Neo's DM answer continues that DM's conversation, answered in the thread", async () => {
    h = await startHarness({
      users: USERS,
      turns: [{ reply: { text: "Noted, 4711." } }, { reply: { text: "You gave me 4711." } }],
    });
    await h.slack.event(
      envelope(channelMessage("D1", "UANN", "my locker code is 4711", { channelType: "im" })),
    );
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "DM answer");
    const answer = h.fake.messages("D1").find((m) => m.text === "Noted, 4711.")!;
    await h.slack.event(
      envelope(
        channelMessage("D1", "UANN", "which code did I give you?", {
          channelType: "im",
          threadTs: answer.ts,
          parent: "UNEO",
        }),
      ),
    );
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 2, "thread answer");
    const reqs = turnRequests(h);
    // Same conversation: the second request extends the first (the DM's words are there).
    expect(reqs[1]!.conversation).toBe(reqs[0]!.conversation);
    expect(sent(reqs[1]!)).toContain("my locker code is 4711");
    expect(h.fake.callsTo("chat.postMessage")[1]!.args).toMatchObject({
      channel: "D1",
      thread_ts: answer.ts,
    });
  });

  it("the manifest subscribes the message events follow-ups arrive by, with their scopes, and the README says so", () => {
    const manifest = parse(
      readFileSync(new URL("../../slack-app-manifest.yaml", import.meta.url), "utf8"),
    ) as {
      settings: { event_subscriptions: { bot_events: string[] } };
    };
    const events = manifest.settings.event_subscriptions.bot_events;
    // Each message event needs its history scope (https://api.slack.com/events/message.channels etc.).
    const scopeOf: Record<string, string> = {
      "message.channels": "channels:history",
      "message.groups": "groups:history",
      "message.mpim": "mpim:history",
      "message.im": "im:history",
    };
    for (const [event, scope] of Object.entries(scopeOf)) {
      expect(events).toContain(event);
      expect(SLACK_BOT_SCOPES as readonly string[]).toContain(scope);
    }
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    for (const event of ["message.channels", "message.groups", "message.mpim"])
      expect(readme).toContain(event);
  });
});
