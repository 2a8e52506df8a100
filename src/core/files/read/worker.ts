/**
 * A file reader worker (see ./pool.ts): reads one file per message, posts the result and how much
 * heap it holds. Every parser (pdf.js, libvips, the tokenizer, UTF-8 decoding of a whole file) runs
 * here, never on the main thread; a file that takes too long or too much memory ends this worker,
 * not the process.
 */
import { createHash } from "node:crypto";
import { parentPort } from "node:worker_threads";
import { estimateTokens } from "../../budget/estimate.js";
import { decodeText } from "../classify.js";
import { pdfText, TooComplexError } from "./pdf.js";
import type { ReadJob, ReadResult, TextRead, WorkerReply } from "./protocol.js";

/** A PDF is read until this many characters per kept token (the token cut comes after). */
const PDF_CHARS_PER_TOKEN = 8;

// Each parser is loaded by the first file that needs it (pdf.js itself is imported by ./pdf.ts).
async function kept(kind: "text" | "pdf", sha256: string, text: string, job: ReadJob): Promise<TextRead> {
  const { keepTokens } = await import("./tokens.js");
  const k = keepTokens(text, job.caps.textTokens);
  return {
    ok: true,
    kind,
    sha256,
    text: k.text,
    tokens: k.tokens,
    estimated: estimateTokens(k.text),
    ...(k.cutChars > 0 ? { cutChars: k.cutChars } : {}),
  };
}

export async function readFile(job: ReadJob): Promise<ReadResult> {
  const sha256 = createHash("sha256").update(job.bytes).digest("hex");
  if (job.kind === "image") {
    const { readImage } = await import("./image.js");
    return readImage(job.bytes, job.caps, sha256);
  }
  if (job.kind === "text") {
    const text = decodeText(job.bytes);
    if (text === undefined) return { ok: false, why: "it is binary, not text" };
    return kept("text", sha256, text, job);
  }
  let pdf: Awaited<ReturnType<typeof pdfText>>;
  try {
    pdf = await pdfText(job.bytes, job.caps, job.caps.textTokens * PDF_CHARS_PER_TOKEN);
  } catch (e) {
    if (e instanceof TooComplexError || e instanceof RangeError) {
      return { ok: false, why: "this PDF is too complex to read" };
    }
    return { ok: false, why: "it is not a readable PDF" };
  }
  if (!pdf.text.trim()) return { ok: false, why: "the PDF has no text layer (a scan?)" };
  return { ...(await kept("pdf", sha256, pdf.text, job)), pages: pdf.pages };
}

parentPort?.on("message", async (job: ReadJob) => {
  const result = await readFile(job).catch(
    (e: unknown): ReadResult => ({ ok: false, why: `it could not be read (${(e as Error).name})` }),
  );
  const reply: WorkerReply = { result, heapUsed: process.memoryUsage().heapUsed };
  const transfer = result.ok && result.kind === "image" ? [result.sent.bytes.buffer as ArrayBuffer] : [];
  parentPort?.postMessage(reply, transfer);
});
