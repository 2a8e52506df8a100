/**
 * How a file's text enters a message: between two lines carrying a nonce drawn for the message
 * (`<<<file-NONCE` … `>>>file-NONCE`), so nothing inside a file can close its block early or pass
 * for Neo's own lines: the file was written before the nonce existed, and a nonce the text happens
 * to contain is drawn again. What Neo says about the file (its header, that it was cut) stays
 * outside the block, on lines of its own. Names are quoted as JSON strings (no line breaks, no
 * unbalanced quotes) and shortened. The pinned rules (agent/prompt.ts) tell the model what the
 * lines mean and that what is between them is data.
 */
import { randomBytes } from "node:crypto";

const NAME_CHARS = 120;

/** A nonce none of `texts` contains. */
export function drawNonce(texts: readonly string[]): string {
  for (;;) {
    const nonce = randomBytes(8).toString("hex");
    if (!texts.some((t) => t.includes(nonce))) return nonce;
  }
}

/** A file name as it appears in Neo's lines: a JSON string, control characters dropped, shortened. */
export function quotedName(name: string): string {
  const clean = name.replace(/\p{Cc}/gu, " ");
  return JSON.stringify(clean.length > NAME_CHARS ? `${clean.slice(0, NAME_CHARS - 1)}…` : clean);
}

/**
 * The file's text as a fenced block: Neo's header line (`head`, an open bracket, closed here), the
 * text between its fences, then Neo's `after` line, if any.
 */
export function fencedText(head: string, text: string, nonce: string, after?: string): string {
  const open = `<<<file-${nonce}`;
  const close = `>>>file-${nonce}`;
  return `${head}, its text between the ${open} and ${close} lines:]\n${open}\n${text}\n${close}${after ? `\n${after}` : ""}`;
}
