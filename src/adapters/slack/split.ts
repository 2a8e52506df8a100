/**
 * Split mrkdwn into messages a person can read and Slack accepts. Cuts prefer paragraph, then line,
 * then word boundaries; a cut inside a code fence closes the fence and reopens it in the next part,
 * and no cut lands inside an escape entity (`&amp;`).
 */

/** Readable part size; well under Slack's 40,000-character text limit and its 3,000-char sections. */
export const SLACK_PART_CHARS = 3000;

const FENCE = "```";

function fenceOpenAfter(text: string, startOpen: boolean): boolean {
  let open = startOpen;
  for (const line of text.split("\n")) if (line.startsWith(FENCE)) open = !open;
  return open;
}

/** The best cut position ≤ `max` in `text`: paragraph, line, space, else hard (entity-safe). */
function cutAt(text: string, max: number): number {
  const window = text.slice(0, max + 1);
  const para = window.lastIndexOf("\n\n");
  if (para > max / 3) return para;
  const line = window.lastIndexOf("\n");
  if (line > max / 3) return line;
  const space = window.lastIndexOf(" ");
  if (space > max / 3) return space;
  let hard = max;
  const amp = text.lastIndexOf("&", hard - 1);
  if (amp >= 0 && hard - amp < 6 && !text.slice(amp, hard).includes(";")) hard = amp;
  return hard;
}

/** Split `text` into parts of at most `max` characters each, code fences balanced in every part. */
export function splitMrkdwn(text: string, max = SLACK_PART_CHARS): string[] {
  if (max < 40) throw new RangeError("splitMrkdwn: max must be at least 40");
  const parts: string[] = [];
  let rest = text.trim();
  let open = false; // whether `rest` continues a code block closed at the end of the previous part
  // Room for the closing fence a part may need ("\n```").
  const budget = max - FENCE.length - 1;
  while (rest.length > 0) {
    const head = open ? `${FENCE}\n${rest}` : rest;
    if (head.length <= max && !fenceOpenAfter(head, false)) {
      parts.push(head);
      break;
    }
    const cut = cutAt(head, Math.min(budget, head.length - 1));
    const body = head.slice(0, cut).replace(/\s+$/, "");
    open = fenceOpenAfter(body, false);
    const part = open ? `${body}\n${FENCE}` : body;
    if (part.replace(/```/g, "").trim().length > 0) parts.push(part);
    rest = head.slice(cut).replace(/^\n+/, "");
  }
  return parts;
}
