/**
 * Only people talking to Neo get answers on Slack: a Slackbot notice in the DM, edit and deletion
 * echoes, join/leave notices and other bots' posts reach the real Bolt app and get no model call;
 * a bot listed in NEO_ANSWER_BOTS is answered like a person.
 *
 * Event shapes follow the Events API `message` subtypes as @slack/types declares them
 * (node_modules/@slack/types/dist/events/message.d.ts: MessageChangedEvent, MessageDeletedEvent,
 * ChannelJoinMessageEvent, ChannelLeaveMessageEvent, BotMessageEvent) and Slack's message event docs
 * (https://docs.slack.dev/reference/events/message); Slackbot posts as user `USLACKBOT`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { envelope, type Harness, startHarness, userTs } from "./support/harness.js";

const dm = (text: string, extra: Record<string, unknown> = {}) => {
  const ts = userTs();
  return {
    type: "message",
    channel: "D1",
    channel_type: "im",
    user: "UANN",
    text,
    ts,
    event_ts: ts,
    client_msg_id: `c-${ts}`,
    ...extra,
  };
};

/** Every user message the model was sent, in every request. */
const userTexts = (h: Harness) =>
  h.ep.requests.flatMap((r) => r.messages.filter((m) => m.role === "user").map((m) => String(m.content)));

describe("Slack: what is not a person talking to Neo gets no answer", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("Slackbot's DM notice, edit/delete echoes, joins, leaves and bot posts: no model call", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Hi Ann." } }] });
    const original = dm("first draft");
    const noise = [
      // A Slackbot notice in Neo's DM (reminders, "only visible to you" tips): user USLACKBOT.
      dm("Reminder: slackbot-notice-xyz", { user: "USLACKBOT", client_msg_id: undefined }),
      // message_changed: hidden, no top-level user; the new text sits in `message`.
      {
        type: "message",
        subtype: "message_changed",
        hidden: true,
        channel: "D1",
        channel_type: "im",
        ts: userTs(),
        event_ts: userTs(),
        message: { ...original, text: "edited-echo-xyz", edited: { user: "UANN", ts: userTs() } },
        previous_message: original,
      },
      {
        type: "message",
        subtype: "message_deleted",
        hidden: true,
        channel: "D1",
        channel_type: "im",
        ts: userTs(),
        event_ts: userTs(),
        deleted_ts: original.ts,
        previous_message: { ...original, text: "deleted-echo-xyz" },
      },
      dm("<@UBOB> has joined the channel join-xyz", {
        subtype: "channel_join",
        user: "UBOB",
        inviter: "UANN",
      }),
      dm("<@UBOB> has left the channel leave-xyz", { subtype: "channel_leave", user: "UBOB" }),
      // Another app's post: subtype bot_message, bot_id, no user.
      dm("deploy finished bot-xyz", {
        subtype: "bot_message",
        bot_id: "BOTHER",
        user: undefined,
        username: "ci",
      }),
      // A bot user posting with its own token: a user id and a bot_id, no subtype.
      dm("beep bot-user-xyz", { user: "UOTHERBOT", bot_id: "BOTHER2", bot_profile: { id: "BOTHER2" } }),
    ];
    for (const event of noise) expect((await h.slack.event(envelope(event))).status).toBe(200);
    await h.slack.event(envelope(dm("are you there?")));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "the one answer");
    expect(h.ep.requests).toHaveLength(1);
    const seen = userTexts(h).join("\n");
    expect(seen).toContain("are you there?");
    expect(seen).not.toMatch(/xyz/);
  });

  it("a bot listed in NEO_ANSWER_BOTS is answered like a person", async () => {
    h = await startHarness({ answerBots: ["BFRIEND"], turns: [{ reply: { text: "Noted, CI." } }] });
    await h.slack.event(
      envelope(
        dm("status: green", { subtype: "bot_message", bot_id: "BFRIEND", user: undefined, username: "ci" }),
      ),
    );
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "the answer");
    expect(userTexts(h).join("\n")).toContain("status: green");
  });
});
