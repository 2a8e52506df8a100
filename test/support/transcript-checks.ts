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
  prev: { messages: WireMessage[]; system: string; index: number },
  next: { messages: WireMessage[]; system: string; index: number },
): string | null {
  if (compactionNumber(next.system) > compactionNumber(prev.system)) return null;
  const a = prev.messages;
  const b = next.messages;
  for (let i = 0; i < a.length; i++) {
    if (i >= b.length) {
      return `request #${next.index} drops ${describeMessage(a[i]!, i)} that request #${prev.index} had (no compaction announced)`;
    }
    if (!sameMessage(a[i]!, b[i]!)) {
      return `request #${next.index} does not extend request #${prev.index}: ${describeMessage(b[i]!, i)} replaces ${describeMessage(a[i]!, i)} (no compaction announced)`;
    }
  }
  if (b.length === a.length) {
    return `request #${next.index} repeats request #${prev.index} without appending anything`;
  }
  return null;
}
