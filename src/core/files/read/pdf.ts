/**
 * The text of a PDF, inside a reader worker only: pdf.js (Mozilla's maintained reader; its legacy
 * build runs on Node 20 without a canvas) replaces built-ins such as `JSON.stringify` with polyfills
 * when it loads, so it is never imported on the main thread. A document is refused before parsing
 * when it declares more objects than the cap, and only its first pages are read.
 */
import type { ReadCaps } from "./protocol.js";

export class TooComplexError extends Error {}

/** Objects the file declares: `n g obj` headers, plus the count (/N) of each compressed object stream. */
export function declaredObjects(bytes: Uint8Array): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  let n = 0;
  for (const _ of text.matchAll(/\d+\s+\d+\s+obj\b/g)) n++;
  for (const m of text.matchAll(/\/Type\s*\/ObjStm[^>]*?\/N\s+(\d+)|\/N\s+(\d+)[^>]*?\/Type\s*\/ObjStm/g))
    n += Number(m[1] ?? m[2]);
  return n;
}

export interface PdfText {
  text: string;
  pages: { read: number; total: number };
}

/**
 * Pages' text separated by blank lines, reading pages until `maxChars` (the token cut comes after)
 * or the page cap. Throws `TooComplexError` over the object cap, any other error when unreadable.
 */
export async function pdfText(bytes: Uint8Array, caps: ReadCaps, maxChars: number): Promise<PdfText> {
  const objects = declaredObjects(bytes);
  if (objects > caps.pdfObjects) throw new TooComplexError(`${objects} objects`);
  const { getDocument } = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const doc = await getDocument({
    data: bytes,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  }).promise;
  try {
    const pages: string[] = [];
    let chars = 0;
    const last = Math.min(doc.numPages, caps.pdfPages);
    for (let i = 1; i <= last && chars <= maxChars; i++) {
      const page = await doc.getPage(i);
      const content = await page.getTextContent();
      const line = content.items.map((it) => ("str" in it ? it.str : "")).join(" ");
      const text = line.replace(/[ \t]+/g, " ").trim();
      pages.push(text);
      chars += text.length;
      page.cleanup();
    }
    return { text: pages.join("\n\n"), pages: { read: pages.length, total: doc.numPages } };
  } finally {
    await doc.destroy();
  }
}
