/** Pure helpers over the answer a draft shows: what of its text a stream can take now, and part equality. */
import { type SlackAnswerPart, safeMarkdown } from "../answer-render.js";

/**
 * The part of `text` whose safe Markdown cannot change as more text arrives: up to the last
 * whitespace, or the last line break when the line being written has a backtick (a code span or
 * fence may still be closing). Appending these keeps a stream append-only.
 */
export function streamable(text: string): string {
  const t = text.replace(/\r\n?/g, "\n");
  const lineStart = t.lastIndexOf("\n") + 1;
  let cut = Math.max(t.lastIndexOf(" "), t.lastIndexOf("\n")) + 1;
  if (t.slice(lineStart, cut).includes("`")) cut = lineStart;
  return safeMarkdown(t.slice(0, cut));
}

export const sameBlocks = (a: SlackAnswerPart, b: SlackAnswerPart): boolean =>
  JSON.stringify(a.blocks ?? []) === JSON.stringify(b.blocks ?? []);
