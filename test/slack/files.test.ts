/**
 * Files shared on Slack, end to end: a `file_share`-carrying mention (file objects in the shape of
 * @slack/types `File`, as docs.slack.dev "file_share message" describes) into the real Bolt app, the
 * file downloaded from the fake's `url_private` with the bot token, the real loop and openai SDK
 * against the validating endpoint.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type FileHost, PNG, startFileHost } from "../files/support.js";
import { envelope, type Harness, mention, startHarness, userTs } from "./support/harness.js";

/** Poll an async condition until it holds (bounded): for store state no call signals. */
async function untilAsync(what: string, cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

type Part = { type: string; text?: string; image_url?: { url: string } };

describe("Slack files on a message", () => {
  let h: Harness | null = null;
  let other: FileHost | null = null;
  afterEach(async () => {
    await h?.close();
    await other?.close();
    h = null;
    other = null;
  });

  it("a PNG reaches a vision model as an image part, fetched from url_private with the bot token", async () => {
    h = await startHarness({
      files: { vision: true },
      turns: [
        {
          expect: (r) => {
            const parts = r.messages[0]!.content as Part[];
            expect(parts[0]!.text).toContain(
              'what is on this screenshot?\n[Image "screen.png" (image/png, 70 B, id F0PNG)',
            );
            // The image decoded and re-encoded by the reader (metadata dropped): a PNG still.
            expect(parts[1]!.type).toBe("image_url");
            expect(parts[1]!.image_url!.url).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
          },
          reply: { text: "A single pixel." },
        },
      ],
    });
    const file = h.fake.addFile({ id: "F0PNG", name: "screen.png", mimetype: "image/png", body: PNG });
    const ts = userTs();
    await h.slack.event(
      envelope(mention("C1", "UANN", "what is on this screenshot?", { ts, files: [file], upload: false })),
    );
    await h.fake.waitFor(
      () => h!.fake.messages("C1", ts).some((m) => m.text === "A single pixel."),
      "answer",
    );
    expect(h.fake.fileRequests).toEqual([
      { path: "/files-pri/T0001-F0PNG/screen.png", authorization: "Bearer xoxb-test-token", served: true },
    ]);
    // The downloaded bytes are deleted when the turn ends (just after the answer is posted).
    await untilAsync("image released", async () => (await h!.store.keys("files:")).length === 0);
  });

  it("a CSV in a DM (file_share, no text) reaches the model as text", async () => {
    h = await startHarness({
      turns: [
        {
          expect: (r) => {
            const text = r.messages[0]!.content as string;
            expect(text).toMatch(
              /^\[File "q3.csv" \(text\/csv, 31 B, id F0CSV\), sha256 [0-9a-f]{12}, its text between the <<<file-([0-9a-f]{16}) and >>>file-\1 lines:\]\n<<<file-\1\n/,
            );
            expect(text).toContain("region,amount\nnorth,12\nsouth,3\n");
          },
          reply: { text: "Total 15." },
        },
      ],
    });
    const file = h.fake.addFile({
      id: "F0CSV",
      name: "q3.csv",
      mimetype: "text/csv",
      body: Buffer.from("region,amount\nnorth,12\nsouth,3\n"),
    });
    const ts = userTs();
    await h.slack.event(
      envelope({
        type: "message",
        subtype: "file_share",
        channel: "D1",
        channel_type: "im",
        user: "UANN",
        text: "",
        ts,
        event_ts: ts,
        files: [file],
        upload: false,
      }),
    );
    await h.fake.waitFor(() => h!.fake.messages("D1").some((m) => m.text === "Total 15."), "answer");
  });

  it("a 50 MB file is refused with a clear message in the thread and never requested", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Sorry, too big." } }] });
    const file = h.fake.addFile({
      id: "F0BIG",
      name: "dump.csv",
      mimetype: "text/csv",
      body: Buffer.from("a,b\n"),
      size: 50 * 1024 * 1024,
    });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "read this", { ts, files: [file] })));
    await h.fake.waitFor(
      () => h!.fake.messages("C1", ts).some((m) => m.text === "Sorry, too big."),
      "answer",
    );
    const thread = h.fake.messages("C1", ts).map((m) => m.text);
    expect(
      thread.some((t) => t.includes('I could not read "dump.csv": it is 50 MB, more than the 20 MB limit.')),
    ).toBe(true);
    expect(h.fake.fileRequests).toEqual([]);
  });

  it("the bot token goes only to Slack's file host: a url_private elsewhere, or another workspace's file, is refused unrequested", async () => {
    other = await startFileHost(undefined, "localhost");
    other.files.set("/files-pri/T0001-F0EVIL/x.png", { body: PNG, type: "image/png" });
    h = await startHarness({ files: { vision: true }, turns: [{ reply: { text: "Could not read them." } }] });
    const evil = {
      ...h.fake.addFile({ id: "F0EVIL", name: "x.png", mimetype: "image/png", body: PNG }),
      url_private: `${other.url}/files-pri/T0001-F0EVIL/x.png`,
    };
    const foreign = h.fake.addFile({
      id: "F0FOR",
      name: "y.png",
      mimetype: "image/png",
      body: PNG,
      team: "T0999",
    });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "look", { ts, files: [evil, foreign] })));
    await h.fake.waitFor(
      () => h!.fake.messages("C1", ts).some((m) => m.text === "Could not read them."),
      "answer",
    );
    expect(other.requests).toEqual([]);
    expect(h.fake.fileRequests).toEqual([]);
    const thread = h.fake
      .messages("C1", ts)
      .map((m) => m.text)
      .join("\n");
    expect(thread).toContain('I could not read "x.png": its address is on localhost');
    expect(thread).toContain('I could not read "y.png": it belongs to another workspace.');
  });
});
