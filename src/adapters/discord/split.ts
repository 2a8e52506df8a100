/**
 * Split Markdown into Discord messages of at most 2,000 characters. Cuts prefer paragraph
 * boundaries, then line boundaries, then spaces; a code fence cut by a split is closed at the end of
 * one message and reopened (with its language) at the start of the next. Pure.
 */

/** Discord's content limit. */
export const DISCORD_MAX_CONTENT = 2000;

interface Block {
  /** Separator before this block in the source ("\n" or "\n\n"). */
  sep: string;
  lines: string[];
  /** The opening fence line (e.g. "```ts") when the block is a fenced code block. */
  fence?: string;
}

const FENCE = /^\s*(```|~~~)/;

function toBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  let current: Block | null = null;
  let blank = false;
  let fenceMarker: string | null = null;
  const flush = () => {
    if (current?.lines.length) blocks.push(current);
    current = null;
  };
  for (const line of text.split("\n")) {
    if (fenceMarker) {
      current!.lines.push(line);
      if (line.trim().startsWith(fenceMarker) && line.trim().replace(fenceMarker, "").trim() === "") {
        fenceMarker = null;
        flush();
      }
      continue;
    }
    const fence = line.match(FENCE);
    if (fence) {
      flush();
      fenceMarker = fence[1]!;
      current = { sep: blank ? "\n\n" : "\n", lines: [line], fence: line.trim() };
      blank = false;
      continue;
    }
    if (line.trim() === "") {
      flush();
      blank = true;
      continue;
    }
    if (!current) {
      current = { sep: blank ? "\n\n" : "\n", lines: [] };
      blank = false;
    }
    current.lines.push(line);
  }
  flush();
  return blocks;
}

/** Cut one over-long line at the last space before `max`, else at `max`. */
function cutLine(line: string, max: number): string[] {
  const out: string[] = [];
  let rest = line;
  while (rest.length > max) {
    const space = rest.lastIndexOf(" ", max);
    const at = space > max / 2 ? space : max;
    out.push(rest.slice(0, at));
    rest = rest.slice(at).replace(/^ /, "");
  }
  out.push(rest);
  return out;
}

/**
 * Split a block that alone exceeds `max` into texts that each fit, fences closed and reopened. The
 * first part fits in `firstMax` (what is left of the message it continues).
 */
function splitBlock(block: Block, max: number, firstMax: number): string[] {
  const fenced = block.fence !== undefined;
  const open = block.fence ?? "";
  const closing = fenced && block.lines.length > 1 ? block.lines[block.lines.length - 1]! : "";
  const inner = fenced ? block.lines.slice(1, closing.trim() ? -1 : undefined) : block.lines;
  // Room for the reopened fence line and the closing fence line.
  const overhead = fenced ? open.length + 5 : 0;
  const parts: string[] = [];
  const roomNow = () => (parts.length ? max : firstMax) - overhead;
  let acc: string[] = [];
  let size = 0;
  const push = () => {
    if (!acc.length) return;
    parts.push(fenced ? `${open}\n${acc.join("\n")}\n\`\`\`` : acc.join("\n"));
    acc = [];
    size = 0;
  };
  for (const line of inner) {
    for (const piece of cutLine(line, max - overhead)) {
      if (size + piece.length + (acc.length ? 1 : 0) > roomNow()) {
        if (!acc.length && !parts.length) parts.push("");
        push();
      }
      acc.push(piece);
      size += piece.length + (acc.length > 1 ? 1 : 0);
    }
  }
  push();
  return parts;
}

export function splitMessage(text: string, max = DISCORD_MAX_CONTENT): string[] {
  const chunks: string[] = [];
  let current = "";
  for (const block of toBlocks(text.replace(/\r\n/g, "\n"))) {
    const body = block.lines.join("\n");
    if (body.length > max) {
      // Fill what is left of the current message, then whole messages.
      const left = current ? max - current.length - block.sep.length : max;
      const [first = "", ...more] = splitBlock(block, max, left);
      const head = first ? (current ? `${current}${block.sep}${first}` : first) : current;
      if (!more.length) {
        current = head;
        continue;
      }
      if (head) chunks.push(head);
      chunks.push(...more.slice(0, -1));
      current = more[more.length - 1]!;
      continue;
    }
    const joined = current ? `${current}${block.sep}${body}` : body;
    if (joined.length <= max) {
      current = joined;
    } else {
      chunks.push(current);
      current = body;
    }
  }
  if (current) chunks.push(current);
  return chunks.filter((c) => c.trim().length > 0);
}
