/**
 * The fake Slack's streaming messages (chat.startStream / appendStream / stopStream), driven by the
 * real @slack/web-api client and its chat streamer: the right calls in the right order build one
 * message; wrong arguments or order are refused as Slack documents; edits per channel per window
 * are counted.
 */
import { WebClient } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../fakes/slack/fake-slack.js";

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const client = (f: FakeSlack) =>
  new WebClient("xoxb-test", { slackApiUrl: f.apiUrl, retryConfig: { retries: 0 } });

describe("fake Slack: streaming messages", () => {
  it("the chat streamer's start, appends and stop build one message in the thread", async () => {
    fake = await startFakeSlack();
    const web = client(fake);
    const streamer = web.chatStream({ channel: "D1", thread_ts: "1600000000.000001", buffer_size: 10 });
    await streamer.append({ markdown_text: "Hello, " });
    await streamer.append({ markdown_text: "this is a streamed answer." });
    await streamer.stop();
    const methods = fake.calls.filter((c) => c.method.startsWith("chat.")).map((c) => c.method);
    expect(methods[0]).toBe("chat.startStream");
    expect(methods.at(-1)).toBe("chat.stopStream");
    const msgs = fake.messages("D1");
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatchObject({
      text: "Hello, this is a streamed answer.",
      thread_ts: "1600000000.000001",
      streaming: false,
    });
  });

  it("refuses a stream without a thread, a channel stream without its recipient, and calls out of order", async () => {
    fake = await startFakeSlack();
    const web = client(fake);
    const error = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: { data?: { error?: string } }) => e.data?.error,
      );
    expect(await error(web.chat.startStream({ channel: "D1" } as never))).toBe("invalid_arguments");
    expect(await error(web.chat.startStream({ channel: "C1", thread_ts: "1.1" }))).toBe("invalid_arguments");
    const started = await web.chat.startStream({
      channel: "C1",
      thread_ts: "1.1",
      recipient_user_id: "U1",
      recipient_team_id: "T0001",
    });
    const ts = String(started.ts);
    expect(await error(web.chat.appendStream({ channel: "C1", ts } as never))).toBe("invalid_arguments");
    expect(await error(web.chat.appendStream({ channel: "C1", ts: "9.9", markdown_text: "x" }))).toBe(
      "message_not_found",
    );
    await web.chat.appendStream({ channel: "C1", ts, markdown_text: "done" });
    await web.chat.stopStream({ channel: "C1", ts });
    expect(await error(web.chat.appendStream({ channel: "C1", ts, markdown_text: "late" }))).toBe(
      "message_not_in_streaming_state",
    );
    expect(await error(web.chat.stopStream({ channel: "C1", ts }))).toBe("message_not_in_streaming_state");
    expect(fake.messages("C1").map((m) => m.text)).toEqual(["done"]);
  });

  it("counts edits per channel per window (updates and appends)", async () => {
    fake = await startFakeSlack();
    const web = client(fake);
    const posted = await web.chat.postMessage({ channel: "C2", text: "a" });
    await web.chat.update({ channel: "C2", ts: String(posted.ts), text: "ab" });
    await web.chat.update({ channel: "C2", ts: String(posted.ts), text: "abc" });
    const s = await web.chat.startStream({ channel: "D2", thread_ts: "1.1" });
    await web.chat.appendStream({ channel: "D2", ts: String(s.ts), markdown_text: "x" });
    expect(fake.busiestEditWindow("C2", 60_000)).toBe(2);
    expect(fake.busiestEditWindow("D2", 60_000)).toBe(1);
    expect(fake.busiestEditWindow("C3", 60_000)).toBe(0);
  });
});
