/**
 * The file reader workers on their own (issue 35): what each kind of hostile file comes to, the
 * caps that stop it, and the built-ins of the main thread after every kind was read.
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { createFileReader } from "../../src/core/files/index.js";
import type { ReadCaps, ReadKind } from "../../src/core/files/read/protocol.js";
import { heavyPdf, PNG, pdfSaying, pngHeader } from "./support.js";

// Captured before any file is read in this process (and before any parser could be loaded).
const BUILT_INS = {
  "JSON.stringify": JSON.stringify,
  "JSON.parse": JSON.parse,
  "Array.prototype.push": Array.prototype.push,
  AbortController: globalThis.AbortController,
  "AbortSignal.any": AbortSignal.any,
  "AbortSignal.timeout": AbortSignal.timeout,
};

const CAPS: ReadCaps = { textTokens: 500, pdfPages: 50, pdfObjects: 5000, imagePixels: 40_000_000 };
const reader = createFileReader({ workers: 1, timeoutMs: 60_000, memoryMb: 256 });
afterAll(() => reader.close());
const read = (kind: ReadKind, bytes: Uint8Array, caps: Partial<ReadCaps> = {}) =>
  reader.read({ kind, bytes, caps: { ...CAPS, ...caps } });

// Generous: workers load their parsers on a shared 2-core machine (several seconds under load).
describe("images", { timeout: 120_000 }, () => {
  it("junk after a valid PNG header, an absurd declared size, bytes that are no image: each refused plainly", async () => {
    const junk = await read("image", pngHeader(640, 480, 200_000));
    expect(junk).toEqual({
      ok: false,
      why: "it is damaged: its header says PNG but its data is not a valid image",
    });
    const absurd = await read("image", pngHeader(100_000, 100_000));
    expect(absurd).toEqual({
      ok: false,
      why: "it says it is 100000 × 100000 pixels, more than the 40,000,000 pixels I read",
    });
    const text = await read("image", Buffer.from("not an image, named .png"));
    expect(text).toEqual({ ok: false, why: "it is not a PNG, JPEG, GIF or WebP image" });
    // The header alone is fine; its data is what is broken.
    const cut = await read("image", (await sharp(PNG).resize(64, 64).png().toBuffer()).subarray(0, 60));
    expect(cut).toEqual({
      ok: false,
      why: "it is damaged: its header says PNG but its data is not a valid image",
    });
  });

  it("an image over the model's limits is downscaled (fit 2048 × 2048, short side 768), re-encoded without its metadata", async () => {
    const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#3366cc" } })
      .jpeg()
      .withMetadata({ exif: { IFD0: { Copyright: "secret place" } } })
      .toBuffer();
    const res = await read("image", big);
    if (!res.ok || res.kind !== "image") throw new Error(JSON.stringify(res));
    expect([res.format, res.width, res.height]).toEqual(["jpeg", 4000, 3000]);
    expect([res.sent.type, res.sent.width, res.sent.height]).toEqual(["image/jpeg", 1024, 768]);
    const meta = await sharp(res.sent.bytes).metadata();
    expect([meta.width, meta.height, meta.exif]).toEqual([1024, 768, undefined]);
    // A small image is not upscaled.
    const small = await read("image", PNG);
    expect(small.ok && small.kind === "image" && [small.sent.width, small.sent.height]).toEqual([1, 1]);
  });
});

describe("text in real tokens", { timeout: 120_000 }, () => {
  const scripts: Record<string, string> = {
    latin: "The quick brown fox jumps over the lazy dog; naïve café déjà vu. ",
    cjk: "我们今天讨论的是人工智能在医疗领域的应用与挑战。東京の天気は晴れです。",
    yi: "ꆈꌠꁱꂷꀉꂿꌠꇁꉌꐥꄮꃀꐚꄉꐯꑞꐨꀨꁨ",
    emoji: "😀🎉🚀👩‍👩‍👧‍👦🇯🇵🧑🏽‍💻",
  };
  for (const [script, unit] of Object.entries(scripts)) {
    it(`${script}: the kept text is within the cap by the real tokenizer, and the count is not below it`, async () => {
      const res = await read("text", Buffer.from(unit.repeat(2000)));
      if (!res.ok || res.kind === "image") throw new Error(JSON.stringify(res));
      const real = encode(res.text).length;
      expect(real).toBeLessThanOrEqual(CAPS.textTokens);
      expect(res.tokens).toBeGreaterThanOrEqual(real);
      expect(res.tokens).toBeLessThanOrEqual(CAPS.textTokens);
      expect(res.cutChars).toBeGreaterThan(0);
      expect(unit.repeat(2000).startsWith(res.text)).toBe(true);
    });
  }
});

describe("PDFs", { timeout: 120_000 }, () => {
  it("a document with more pages than the cap: only the first pages are read, and said", async () => {
    const res = await read("pdf", heavyPdf.pages(120), { pdfPages: 5 });
    if (!res.ok || res.kind === "image") throw new Error(JSON.stringify(res));
    expect(res.pages).toEqual({ read: 5, total: 120 });
    expect(res.text).toBe(["page 1", "page 2", "page 3", "page 4", "page 5"].join("\n\n"));
  });

  it("more declared objects than the cap: refused as too complex before it is parsed", async () => {
    expect(await read("pdf", heavyPdf.objects(6000))).toEqual({
      ok: false,
      why: "this PDF is too complex to read",
    });
  });

  it("a read over the wall time or the heap: the worker is stopped and the user told plainly; the next file is read", async () => {
    const slow = createFileReader({ workers: 1, timeoutMs: 300, memoryMb: 256 });
    try {
      const res = await slow.read({ kind: "pdf", bytes: heavyPdf.bigStream(400_000), caps: CAPS });
      expect(res).toEqual({ ok: false, why: "this PDF is too complex to read (it needed more than 0.3 s)" });
    } finally {
      await slow.close();
    }
    const small = createFileReader({ workers: 1, timeoutMs: 60_000, memoryMb: 64 });
    try {
      const res = await small.read({ kind: "pdf", bytes: heavyPdf.bigStream(2_000_000), caps: CAPS });
      expect(res).toEqual({
        ok: false,
        why: "this PDF is too complex to read (it needed more than 64 MB of memory)",
      });
      const next = await small.read({ kind: "text", bytes: Buffer.from("still here"), caps: CAPS });
      expect(next).toMatchObject({ ok: true, text: "still here" });
    } finally {
      await small.close();
    }
  });

  it("deep nesting does not take the reader down", async () => {
    const res = await read("pdf", heavyPdf.nested(200_000));
    // pdf.js gives up on the nesting (or reads around it): either way an answer, not a crash.
    expect(res.ok ? res.kind : res.why).toMatch(/pdf|too complex|not a readable PDF/);
    const after = await read("pdf", pdfSaying("after the deep one"));
    expect(after.ok && after.kind === "pdf" && after.text).toBe("after the deep one");
  });
});

describe("the main thread's built-ins", { timeout: 120_000 }, () => {
  it("after every kind of file was read, JSON, Array.prototype.push and AbortController are the runtime's own", async () => {
    for (const [kind, bytes] of [
      ["pdf", pdfSaying("hello")],
      ["image", PNG],
      ["text", Buffer.from("plain text")],
    ] as const) {
      expect((await read(kind, bytes)).ok).toBe(true);
    }
    const now = {
      "JSON.stringify": JSON.stringify,
      "JSON.parse": JSON.parse,
      "Array.prototype.push": Array.prototype.push,
      AbortController: globalThis.AbortController,
      "AbortSignal.any": AbortSignal.any,
      "AbortSignal.timeout": AbortSignal.timeout,
    };
    for (const [name, fn] of Object.entries(now)) expect(fn, name).toBe(BUILT_INS[name as keyof typeof now]);
    for (const fn of [JSON.stringify, JSON.parse, Array.prototype.push]) {
      expect(Function.prototype.toString.call(fn)).toContain("[native code]");
    }
    // And pdf.js was never loaded here.
    expect(Object.keys(globalThis).some((k) => k.startsWith("pdfjs"))).toBe(false);
  });
});
