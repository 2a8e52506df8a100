/**
 * Text out of a file: text-like files as they are, PDFs through pdf.js (Mozilla's maintained
 * reader; its legacy build runs on Node 20 without a canvas). Either is cut to a token budget with
 * a marker saying how much was left out, so one file never crowds out the conversation.
 */
import { estimateTokens } from "../budget/estimate.js";

/** `text` cut to about `maxTokens`, keeping its beginning, with a marker naming the file and the cut. */
export function truncateToTokens(text: string, maxTokens: number, name: string): string {
  const tokens = estimateTokens(text);
  if (tokens <= maxTokens) return text;
  // Characters are proportional to tokens closely enough here; the marker says exactly what went.
  const keep = Math.floor((text.length * maxTokens) / tokens);
  const cut = text.length - keep;
  return `${text.slice(0, keep)}\n[… ${name} truncated: ${cut.toLocaleString("en-US")} more characters (about ${(tokens - maxTokens).toLocaleString("en-US")} tokens) not shown]`;
}

/**
 * The text of a PDF, pages separated by blank lines, reading pages only until `maxChars` (a long
 * document is cut to the token budget anyway). Throws when the bytes are not a readable PDF.
 */
export async function pdfText(bytes: Uint8Array, maxChars: number): Promise<string> {
  const { getDocument } = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const doc = await getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  }).promise;
  try {
    const pages: string[] = [];
    let chars = 0;
    for (let i = 1; i <= doc.numPages && chars <= maxChars; i++) {
      const page = await doc.getPage(i);
      const content = await page.getTextContent();
      const line = content.items.map((it) => ("str" in it ? it.str : "")).join(" ");
      const text = line.replace(/[ \t]+/g, " ").trim();
      pages.push(text);
      chars += text.length;
      page.cleanup();
    }
    return pages.join("\n\n");
  } finally {
    await doc.destroy();
  }
}
