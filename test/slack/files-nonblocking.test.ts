/**
 * Issue 35: a heavy file never holds anyone else up. Alice attaches five files of one heavy kind
 * (the reader pool pinned to one worker, so they are read one after another, seconds in all here:
 * pdf.js and libvips load in the worker, each file is parsed to its caps); once her first file is
 * fetched, Bob mentions Neo in another channel. His mention is answered, and `/healthz` answers,
 * while her files are still being read: her turn has not reached the model yet (it does once every
 * file is read). A turn of his that waited on the readers, or an event loop held by a read, would
 * answer him after her request. What reading each kind costs the main thread, in ms of stall, is in
 * BENCHMARKS.md (`npm run bench files`).
 */
import sharp from "sharp";
import { afterEach, describe, expect, it } from "vitest";
import { healthRoute } from "../../src/ops/health.js";
import { heavyPdf, pngHeader } from "../files/support.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { envelope, type Harness, mention, startHarness, until } from "./support/harness.js";

const lastUser = (r: ScriptedRequest) => String(JSON.stringify(r.messages.at(-1)?.content ?? ""));

/** Text in several scripts, ~18 MB: the reader counts its real tokens to cut it. */
const HUGE_TEXT = Buffer.from("Grüße 漢字テキスト ꀀꀁꀂꀃ 😀🚀 lorem ipsum dolor, 12345\n".repeat(240_000));

/** A real 7000×7000 photo-sized PNG (49 Mpx, under the pixel cap): decoded whole, then downscaled. */
const BIG_PNG = await sharp({ create: { width: 7000, height: 7000, channels: 3, background: "#3a6" } })
  .png()
  .toBuffer();

/** `body(i)`: the i-th of the five files. */
const KINDS: Array<{ kind: string; name: string; mimetype: string; body: (i: number) => Buffer }> = [
  { kind: "a 500-page PDF", name: "pages.pdf", mimetype: "application/pdf", body: () => heavyPdf.pages(500) },
  {
    kind: "a PDF nested 100,000 deep",
    name: "deep.pdf",
    mimetype: "application/pdf",
    body: () => heavyPdf.nested(100_000),
  },
  {
    kind: "a PDF drawing 300,000 operations",
    name: "ops.pdf",
    mimetype: "application/pdf",
    body: () => heavyPdf.bigStream(300_000),
  },
  {
    kind: "a PDF declaring 150,000 objects",
    name: "objs.pdf",
    mimetype: "application/pdf",
    body: () => heavyPdf.objects(150_000),
  },
  {
    kind: "7000×7000 images and junk after a PNG header",
    name: "img.png",
    mimetype: "image/png",
    body: (i) => (i < 2 ? BIG_PNG : pngHeader(7000, 7000, 1 << 20)),
  },
  {
    kind: "18 MB of text in several scripts",
    name: "huge.txt",
    mimetype: "text/plain",
    body: () => HUGE_TEXT,
  },
];

describe("Slack: a heavy file never holds up another user", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it.each(KINDS)(
    "while $kind is read, Bob is answered and /healthz answers",
    async ({ name, mimetype, body }) => {
      h = await startHarness({
        files: { vision: true, workers: 1 },
        customRoutes: [healthRoute([{ name: "slack", check: () => ({ ok: true }) }])],
      });
      h.ep.fallback((r) => ({
        text: r.purpose === "turn" ? `answer to ${lastUser(r).includes("bob") ? "bob" : "alice"}` : "{}",
      }));
      const files = Array.from({ length: 5 }, (_, i) =>
        h!.fake.addFile({ id: `F0HEAVY${i}`, name: `${i}-${name}`, mimetype, body: body(i) }),
      );
      const aliceAsked = () =>
        h!.ep.requests.some((r) => r.purpose === "turn" && lastUser(r).includes("alice reads"));
      await h.slack.event(envelope(mention("C1", "UANN", "alice reads these", { files, upload: false })));
      // Her files are being fetched and read (the first is in): now Bob asks.
      await until("Alice's first file fetched", () => h!.fake.fileRequests.some((f) => f.served));
      await h.slack.event(envelope(mention("C2", "UBOB", "bob asks a question")));
      await until(
        "Bob answered",
        () => h!.fake.messages("C2").some((m) => m.text === "answer to bob"),
        20_000,
      );
      expect(
        aliceAsked(),
        "Alice's files were all read before Bob's answer: nothing shows it waited for none",
      ).toBe(false);
      const health = await fetch(`http://127.0.0.1:${h.adapter.port()}/healthz`);
      expect(health.status).toBe(200);
      expect(aliceAsked()).toBe(false);
    },
  );
});
