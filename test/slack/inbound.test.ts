import { describe, expect, it } from "vitest";
import { parseThreadLink, slackUserId } from "../../src/adapters/slack/command-context.js";
import { decideInbound } from "../../src/adapters/slack/inbound.js";
import { renderSlackText } from "../../src/adapters/slack/readable.js";
import { channelGate, DEFAULT_CHANNEL_SETTINGS } from "../../src/core/channels/index.js";

const me = { teamId: "T1", botUserId: "UNEO", botId: "BNEO" };

describe("inbound decisions", () => {
  it("a top-level mention starts a thread on the message", () => {
    const d = decideInbound(
      { type: "app_mention", channel: "C1", user: "U1", text: "<@UNEO> hi", ts: "1.1" },
      me,
    );
    expect(d).toMatchObject({
      kind: "message",
      conversation: "slack:T1:C1:1.1",
      threadTs: "1.1",
      content: { text: "<@UNEO> hi" },
      shared: true,
      inThread: false,
      id: "T1/C1/1.1",
    });
  });

  it("a mention inside a thread stays in that thread and asks for its context", () => {
    const d = decideInbound(
      { type: "app_mention", channel: "C1", user: "U1", text: "<@UNEO> and?", ts: "2.2", thread_ts: "1.1" },
      me,
    );
    expect(d).toMatchObject({ conversation: "slack:T1:C1:1.1", threadTs: "1.1", inThread: true });
  });

  it("a DM is one conversation; a reply in a thread there continues it, answered in the thread", () => {
    const base = { type: "message", channel_type: "im", channel: "D1", user: "U1", text: "yo", ts: "3.3" };
    expect(decideInbound(base, me)).toMatchObject({
      conversation: "slack:T1:D1:D1",
      threadTs: undefined,
      shared: false,
    });
    expect(decideInbound({ ...base, thread_ts: "1.0" }, me)).toMatchObject({
      conversation: "slack:T1:D1:D1",
      threadTs: "1.0",
    });
  });

  it("ignores with a reason: own posts, bots, edits, deletions, channel chatter, empty", () => {
    const base = { type: "message", channel_type: "im", channel: "D1", user: "U1", text: "x", ts: "1.1" };
    const reason = (e: Record<string, unknown>) => {
      const d = decideInbound(e, me);
      return d.kind === "ignore" ? d.reason : "accepted";
    };
    expect(reason({ ...base, user: "UNEO" })).toBe("Neo's own post");
    expect(reason({ ...base, bot_id: "BNEO" })).toBe("Neo's own post");
    expect(reason({ ...base, bot_id: "B2", subtype: "bot_message" })).toBe(
      "bot message (not in NEO_ANSWER_BOTS)",
    );
    expect(reason({ ...base, user: "USLACKBOT" })).toBe("Slackbot notice");
    expect(reason({ ...base, subtype: "channel_join" })).toBe("message subtype channel_join");
    expect(reason({ ...base, subtype: "message_changed" })).toBe("message edit");
    expect(reason({ ...base, subtype: "message_deleted" })).toBe("message deletion");
    // Channel chatter is the channel gate's to decide: without a mention it needs `mention optional`.
    const chatter = decideInbound({ ...base, channel: "C1", channel_type: "channel" }, me);
    expect(chatter).toMatchObject({ kind: "message", mentioned: false, shared: true });
    expect(channelGate(DEFAULT_CHANNEL_SETTINGS, { dm: false, mentioned: false, followUp: false })).toEqual({
      answer: false,
      reason: "channel message without a mention",
    });
    expect(reason({ ...base, text: "<@UNEO>" })).toBe("empty message");
    expect(reason({ nonsense: true })).toContain("unrecognised event shape");
  });

  it("turns Slack markup into plain text", async () => {
    const names = { user: async () => "Bob", channel: async () => "general" };
    expect(
      await renderSlackText(
        "<@UNEO> see <https://a.b|docs> &amp; <#C1|general> <@U2|bob> &lt;x&gt;",
        names,
        "UNEO",
      ),
    ).toBe("see docs (https://a.b) & #general @Bob <x>");
  });

  it("reads user and thread references in commands", () => {
    expect(slackUserId("<@U123|ann>")).toBe("U123");
    expect(slackUserId("U123")).toBe("U123");
    expect(slackUserId("ann")).toBeUndefined();
    expect(parseThreadLink("https://x.slack.com/archives/C1/p1700000000000100")).toEqual({
      channel: "C1",
      threadTs: "1700000000.000100",
    });
    expect(
      parseThreadLink(
        "<https://x.slack.com/archives/C1/p1700000000000200?thread_ts=1700000000.000100&cid=C1>",
      ),
    ).toEqual({
      channel: "C1",
      threadTs: "1700000000.000100",
    });
  });
});
