/**
 * How an answer's Markdown becomes Slack messages. mrkdwn has no tables, so a part with a
 * Markdown table goes out as a `markdown` block, which Slack renders as standard Markdown (tables
 * included; at most 12,000 characters of markdown blocks per message); every other part stays
 * mrkdwn, which is what Neo's other messages (status, notices, approvals) use too. Each message
 * keeps a mrkdwn `text`, which Slack shows in notifications and search.
 *
 * Safety is the same in both forms: outside code, `<`, `>` and `&` can only appear literally
 * (escaped), so no output forms `<!channel>`, `<!here>`, `<@U…>` or `<!subteam^…>`, and bare
 * `@channel`-style words are broken with a zero-width space.
 */
import { markdownToMrkdwn } from "./mrkdwn.js";
import { SLACK_PART_CHARS, splitMrkdwn } from "./split.js";

/** Slack's cumulative limit for markdown blocks in one message. */
export const MARKDOWN_BLOCK_CHARS = 12_000;

export interface SlackAnswerPart {
  /** mrkdwn: the message text, or the notification/search text when `blocks` carry the content. */
  text: string;
  blocks?: Array<{ type: "markdown"; text: string }>;
}

/** A GFM table: a header row of cells, then a delimiter row (`| --- | :-: |`). */
const TABLE_DELIMITER = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

/** Whether `markdown` has a table outside code fences. */
export function hasTable(markdown: string): boolean {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  let inFence = false;
  for (const [i, line] of lines.entries()) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    else if (
      !inFence &&
      i > 0 &&
      TABLE_DELIMITER.test(line) &&
      line.includes("-") &&
      lines[i - 1]!.includes("|")
    )
      return true;
  }
  return false;
}

const BROADCAST = /@(channel|here|everyone)\b/gi;

/**
 * Escape Slack's control characters outside code spans with CommonMark backslash escapes; a `<`
 * before `!`, `@` or `#` also gets a zero-width space, so not even the raw text reads `<!channel>`.
 */
function escapeInline(line: string): string {
  return line
    .split(/(`[^`]*`)/)
    .map((piece, i) =>
      i % 2 === 1
        ? piece
        : piece
            .replace(/([&<>])/g, "\\$1")
            .replace(/\\<(?=[!@#])/g, "\\<\u200b")
            .replace(BROADCAST, "@\u200b$1"),
    )
    .join("");
}

/** Model Markdown made safe for a markdown block; fenced code is left as written (it renders verbatim). */
export function safeMarkdown(markdown: string): string {
  let inFence = false;
  return markdown
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return line;
      }
      return inFence ? line : escapeInline(line);
    })
    .join("\n");
}

/** The messages an answer is posted as, in order. */
export function renderAnswer(markdown: string): SlackAnswerPart[] {
  if (!hasTable(markdown)) return splitMrkdwn(markdownToMrkdwn(markdown)).map((text) => ({ text }));
  // Cut on paragraph boundaries with fences balanced (the splitter's rules hold for Markdown too),
  // leaving room for the escapes safeMarkdown adds.
  return splitMrkdwn(markdown, Math.floor(MARKDOWN_BLOCK_CHARS / 2)).map((part) => ({
    text: splitMrkdwn(markdownToMrkdwn(part), SLACK_PART_CHARS)[0] ?? "",
    blocks: [{ type: "markdown", text: safeMarkdown(part) }],
  }));
}
