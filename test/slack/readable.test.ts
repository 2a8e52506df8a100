/**
 * What the model reads from a Slack message: names and ISO text, never raw ids. Mentions, channels,
 * special mentions, dates and links are rendered through the real Bolt app with `users.info` /
 * `conversations.info` served by the fake (and cached); files are described by name, type and size;
 * a shared message comes with who wrote it and where.
 *
 * Markup from Slack's "Formatting message text" reference
 * (https://docs.slack.dev/messaging/formatting-message-text: `<@U…>`, `<#C…|>`, `<!here>`,
 * `<!subteam^S…>`, `<!date^1392734382^{date_short}|…>`, `<url|label>`); file objects from
 * @slack/types (node_modules/@slack/types/dist/events/message.d.ts, File); the shared-message attachment (`is_share`, `author_id`,
 * `channel_id`, `from_url`, `ts`, `text`) as Slack delivers a message shared into a DM
 * (MessageAttachment fields in @slack/types message-attachments.d.ts plus the share fields).
 */
import { afterEach, describe, expect, it } from "vitest";
import { envelope, type Harness, startHarness, userTs } from "./support/harness.js";

const dm = (extra: Record<string, unknown>) => {
  const ts = userTs();
  return { type: "message", channel: "D1", channel_type: "im", user: "UANN", ts, event_ts: ts, ...extra };
};

const lastUserText = (h: Harness): string => {
  const users = h.ep.requests.at(-1)!.messages.filter((m) => m.role === "user");
  return String(users.at(-1)!.content);
};

describe("Slack: readable content for the model", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("mentions, channels, special mentions, dates and links become names and ISO text", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Got it." } }] });
    const text = [
      "<@UBOB> and <@UBOB|bob> please check <#CRANDOM|> and <#C1|general>,",
      "<!here> <!channel> <!everyone> <!subteam^S0123ABC|@devs>:",
      "due <!date^1392734382^{date_short}|Feb 18, 2014> per <https://example.com/report?a=1&amp;b=2|the report>",
      "mail <mailto:ann@example.com|ann@example.com>, 1 &lt; 2",
    ].join(" ");
    await h.slack.event(envelope(dm({ text })));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
    const seen = lastUserText(h);
    expect(seen).toContain(
      "@Bob and @Bob please check #random and #general, @here @channel @everyone @devs: due 2014-02-18T14:39:42Z per the report (https://example.com/report?a=1&b=2) mail ann@example.com, 1 < 2",
    );
    expect(seen).not.toMatch(/<[@#!]/);
    // Names are looked up once and cached (the speaker's own name included).
    expect(h.fake.callsTo("users.info").filter((c) => c.args.user === "UBOB")).toHaveLength(1);
    expect(h.fake.callsTo("conversations.info").map((c) => c.args.channel)).toEqual(["CRANDOM"]);
  });

  it("an unknown user or channel falls back to the label or id, and the message is still answered", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Ok." } }] });
    await h.slack.event(envelope(dm({ text: "ask <@UGONE> in <#CGONE> or <@UGONE2|old name>" })));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
    expect(lastUserText(h)).toContain("ask @UGONE in #CGONE or @old name");
  });

  it("a shared message and its attachment are described to the model, never dropped", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Read the share." } }] });
    await h.slack.event(
      envelope(
        dm({
          text: "what do you make of this?",
          attachments: [
            {
              id: 1,
              is_share: true,
              is_msg_unfurl: true,
              author_id: "UBOB",
              author_subname: "bob",
              channel_id: "C1",
              channel_name: "general",
              from_url: "https://fake.slack.com/archives/C1/p1700000000000100",
              ts: "1700000000.000100",
              text: "we ship on <!date^1700600000^{date}|Tuesday> with <@UANN>",
              fallback: "[November 14th, 2023 10:13 PM] bob: we ship on Tuesday",
              footer: "Posted in #general",
              mrkdwn_in: ["text"],
              // A file on the shared message: not Neo's to read (the files work reads the
              // message's own files), so it is described.
              files: [
                {
                  id: "F0123",
                  name: "report.csv",
                  title: "report.csv",
                  mimetype: "text/csv",
                  filetype: "csv",
                  pretty_type: "CSV",
                  size: 12_288,
                  mode: "hosted",
                },
              ],
            },
          ],
        }),
      ),
    );
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
    const seen = lastUserText(h);
    expect(seen).toContain("what do you make of this?");
    expect(seen).toContain(
      "[shared message from @Bob in #general at 2023-11-14T22:13:20Z (https://fake.slack.com/archives/C1/p1700000000000100)]",
    );
    expect(seen).toContain(
      "we ship on 2023-11-21T20:53:20Z with @Ann\n[attached: report.csv, text/csv, 12 KB]",
    );
  });
});
