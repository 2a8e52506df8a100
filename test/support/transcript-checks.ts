/**
 * Protocol checks the scripted endpoint runs on every request (the seed's ValidatingMockAPI).
 * Pure functions: a request's messages in, a list of violations out, each naming the message.
 */
import { compactionNumber } from "../../src/core/compaction/marker.js";

/** A chat message as it arrives on the wire (system messages included). */
export interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type?: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** Human-readable name of `messages[i]` for violation messages. */
export function describeMessage(m: WireMessage, i: number): string {
  const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? null);
  const short = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  const calls = m.tool_calls?.length ? ` tool_calls=[${m.tool_calls.map((c) => c.id).join(",")}]` : "";
  const id = m.tool_call_id ? ` tool_call_id=${m.tool_call_id}` : "";
  return `messages[${i}] (${m.role}${id}${calls}: ${JSON.stringify(short)})`;
}

function normalContent(c: unknown): string {
  if (c === null || c === undefined) return "";
  return typeof c === "string" ? c : JSON.stringify(c);
}

/** Structural equality of two wire messages (null and "" content are the same). */
export function sameMessage(a: WireMessage, b: WireMessage): boolean {
  if (a.role !== b.role || normalContent(a.content) !== normalContent(b.content)) return false;
  if ((a.tool_call_id ?? null) !== (b.tool_call_id ?? null)) return false;
  const ca = a.tool_calls ?? [];
  const cb = b.tool_calls ?? [];
  if (ca.length !== cb.length) return false;
  return ca.every(
    (c, i) =>
      c.id === cb[i]!.id &&
      c.function.name === cb[i]!.function.name &&
      c.function.arguments === cb[i]!.function.arguments,
  );
}

/**
 * Tool call / tool result pairing: each assistant tool call is answered by exactly one tool message
 * among the messages that directly follow it, and every tool message answers a call of the
 * assistant message right before its run of tool messages.
 */
export function pairingViolations(messages: WireMessage[]): string[] {
  const out: string[] = [];
  let open: Map<string, number> | null = null; // call id -> index of the assistant message
  let answered = new Set<string>();
  const closeBatch = () => {
    if (!open) return;
    for (const [id, at] of open) {
      if (!answered.has(id))
        out.push(`tool call ${id} of ${describeMessage(messages[at]!, at)} has no result`);
    }
    open = null;
    answered = new Set();
  };
  messages.forEach((m, i) => {
    if (m.role === "tool") {
      const id = m.tool_call_id ?? "";
      if (!open?.has(id)) out.push(`orphaned tool result ${describeMessage(m, i)}: no preceding call ${id}`);
      else if (answered.has(id)) out.push(`second result for tool call ${id} at ${describeMessage(m, i)}`);
      else answered.add(id);
      return;
    }
    closeBatch();
    if (m.role === "assistant" && m.tool_calls?.length) {
      open = new Map(m.tool_calls.map((c) => [c.id, i]));
    }
  });
  closeBatch();
  return out;
}

/**
 * No message appears twice: a tool call id is used by one call only, and the same message is never
 * appended twice in a row. (Equal text far apart is legitimate: a user may say "yes" twice.)
 */
export function duplicateViolations(messages: WireMessage[]): string[] {
  const out: string[] = [];
  const callIds = new Map<string, number>();
  messages.forEach((m, i) => {
    for (const c of m.tool_calls ?? []) {
      const first = callIds.get(c.id);
      if (first !== undefined && first !== i) {
        out.push(`duplicate tool call id ${c.id}: ${describeMessage(m, i)} repeats messages[${first}]`);
      }
      if (first === undefined) callIds.set(c.id, i);
    }
    const prev = messages[i - 1];
    if (prev && m.role !== "tool" && sameMessage(prev, m)) {
      out.push(`duplicate message: ${describeMessage(m, i)} repeats messages[${i - 1}]`);
    }
  });
  return out;
}

/**
 * Turn alternation (the seed's first invariant; strict chat templates of open-weight models, as
 * vLLM serves them, refuse a request that breaks it): after the system block the transcript starts
 * with a user message, no two user messages follow each other, and no two assistant messages do.
 * Tool results belong to the assistant call before them (pairing checks that); a user message may
 * follow tool results (a message that arrived while the tools ran).
 */
export function alternationViolations(messages: WireMessage[]): string[] {
  const out: string[] = [];
  const first = messages[0];
  if (first && first.role !== "user")
    out.push(`the transcript starts with ${describeMessage(first, 0)}, not a user message`);
  messages.forEach((m, i) => {
    const prev = messages[i - 1];
    if (!prev || (m.role !== "user" && m.role !== "assistant") || prev.role !== m.role) return;
    out.push(`${m.role}, ${m.role}: ${describeMessage(m, i)} follows ${describeMessage(prev, i - 1)}`);
  });
  return out;
}

/** The system text of a request: all system/developer messages joined. */
export function systemText(messages: WireMessage[]): string {
  return messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => normalContent(m.content))
    .join("\n");
}

/**
 * Prefix consistency between two requests of one conversation. `prev` is the last request that
 * was answered successfully. The new request must strictly extend it, unless its system block
 * announces a later compaction (see `src/core/compaction/marker.ts`).
 */
export function prefixViolation(
  prev: { messages: WireMessage[]; system: string; head: string; index: number },
  next: { messages: WireMessage[]; system: string; head: string; index: number },
): string | null {
  if (compactionNumber(next.system) > compactionNumber(prev.system)) return null;
  // What precedes the transcript is what a provider's prompt cache reuses first: it must not change.
  if (next.head !== prev.head) {
    return `request #${next.index} changes the system text before the transcript that request #${prev.index} sent (no compaction announced): a prompt cache reuses nothing of it`;
  }
  const a = prev.messages;
  const b = next.messages;
  for (let i = 0; i < a.length; i++) {
    if (i >= b.length) {
      return `request #${next.index} drops ${describeMessage(a[i]!, i)} that request #${prev.index} had (no compaction announced)`;
    }
    if (!sameMessage(a[i]!, b[i]!) && !releasedImages(a[i]!, b[i]!)) {
      return `request #${next.index} does not extend request #${prev.index}: ${describeMessage(b[i]!, i)} replaces ${describeMessage(a[i]!, i)} (no compaction announced)`;
    }
  }
  if (b.length === a.length) {
    return `request #${next.index} repeats request #${prev.index} without appending anything`;
  }
  return null;
}

/** The text parts of a content array, joined (a string content is its own text). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p): p is { type: "text"; text: string } => p?.type === "text")
    .map((p) => p.text)
    .join("");
}

/**
 * A user message sent with image parts in one request and as its text alone in the next: the
 * images were released when their turn ended (`src/core/llm/wire.ts`). The one allowed change of
 * an earlier message; anything else (different text, images appearing later) still breaks the prefix.
 */
function releasedImages(prev: WireMessage, next: WireMessage): boolean {
  if (prev.role !== "user" || next.role !== "user") return false;
  if (!Array.isArray(prev.content) || typeof next.content !== "string") return false;
  return contentText(prev.content) === next.content;
}

const IMAGE_SIGNATURES: Record<string, (b: Buffer) => boolean> = {
  "image/png": (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  "image/jpeg": (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  "image/gif": (b) => b.subarray(0, 4).toString("latin1") === "GIF8",
  "image/webp": (b) =>
    b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP",
};

/**
 * Content arrays as OpenAI accepts them: user messages may mix `text` parts and `image_url` parts;
 * an image's URL is https or a base64 data URL of PNG, JPEG, GIF or WebP whose bytes really are
 * that format; assistant, tool and system messages carry text (a string or text parts) only; no
 * array is empty and every text part has a string text.
 */
export function contentViolations(messages: WireMessage[]): string[] {
  const out: string[] = [];
  messages.forEach((m, i) => {
    if (m.content === null || m.content === undefined || typeof m.content === "string") return;
    const where = describeMessage(m, i);
    if (!Array.isArray(m.content)) {
      out.push(`${where}: content is neither a string nor an array`);
      return;
    }
    if (m.content.length === 0) out.push(`${where}: empty content array`);
    for (const [j, part] of (m.content as Array<Record<string, unknown>>).entries()) {
      if (part?.type === "text") {
        if (typeof part.text !== "string") out.push(`${where}: part ${j} has no text`);
        continue;
      }
      if (part?.type !== "image_url" || m.role !== "user") {
        out.push(`${where}: part ${j} of type ${String(part?.type)} is not allowed in a ${m.role} message`);
        continue;
      }
      const url = (part.image_url as { url?: unknown } | undefined)?.url;
      if (typeof url !== "string") {
        out.push(`${where}: image part ${j} has no url`);
        continue;
      }
      if (url.startsWith("https://")) continue;
      const data = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/]+={0,2})$/.exec(url);
      if (!data) {
        out.push(`${where}: image part ${j} is not an https URL or a base64 PNG/JPEG/GIF/WebP data URL`);
        continue;
      }
      if (!IMAGE_SIGNATURES[data[1]!]!(Buffer.from(data[2]!, "base64"))) {
        out.push(`${where}: image part ${j} says ${data[1]} but its bytes are not`);
      }
    }
  });
  return out;
}

/**
 * The system text before the transcript: the request's leading system messages. (A system message
 * after the transcript, the turn's context, may change from request to request.)
 */
export function systemHead(messages: WireMessage[]): string {
  const head: string[] = [];
  for (const m of messages) {
    if (m.role !== "system" && m.role !== "developer") break;
    head.push(normalContent(m.content));
  }
  return head.join("\n");
}
