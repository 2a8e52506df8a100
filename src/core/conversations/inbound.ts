/**
 * Inbound messages at the boundary: validated before anything is journaled, and turned into the
 * loop's `TurnInput` with any earlier thread messages set out as context.
 */
import type { TurnInput } from "../agent/types.js";
import type { InboundFile } from "../files/types.js";
import { parseConversationKey } from "../keys.js";
import { type Place, placeKind } from "../place.js";
import type { InboundMessage } from "./types.js";

export class InboundMessageError extends Error {
  readonly code = "BAD_INBOUND";
}

/**
 * Validate an adapter's message; throws `InboundMessageError` naming the bad field. Checked by hand,
 * not with zod: the message is the adapter's own typed value, not a platform payload, and a zod
 * object parse of it cost 60-100 µs of CPU per message. Only the known fields are kept (as zod's
 * strip did), so nothing else is journaled.
 */
export function parseInbound(message: unknown): InboundMessage {
  const m = record(message, "value");
  const out: InboundMessage = {
    id: nonEmpty(m.id, "id"),
    conversation: conversationKey(m.conversation),
    speaker: speaker(m.speaker),
    text: str(m.text, "text"),
    shared: bool(m.shared, "shared"),
    place: place(m.place),
    receivedAt: finite(m.receivedAt, "receivedAt"),
  };
  if (m.files !== undefined) out.files = list(m.files, "files").map(file);
  if (m.context !== undefined) out.context = list(m.context, "context").map((c, i) => str(c, `context.${i}`));
  if (m.position !== undefined) out.position = position(m.position, "position");
  if (m.through !== undefined) out.through = position(m.through, "through");
  if (m.viewing !== undefined) {
    out.viewing = str(m.viewing, "viewing");
    if (out.viewing.length > 200) bad("viewing", "expected at most 200 characters");
  }
  return out;
}

function bad(path: string, why: string): never {
  throw new InboundMessageError(`inbound message: ${path}: ${why}`);
}

function record(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad(path, "expected an object");
  return v as Record<string, unknown>;
}

function list(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) bad(path, "expected an array");
  return v;
}

function str(v: unknown, path: string): string {
  if (typeof v !== "string") bad(path, "expected a string");
  return v;
}

function nonEmpty(v: unknown, path: string): string {
  if (str(v, path) === "") bad(path, "expected a non-empty string");
  return v as string;
}

function bool(v: unknown, path: string): boolean {
  if (typeof v !== "boolean") bad(path, "expected a boolean");
  return v;
}

function finite(v: unknown, path: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) bad(path, "expected a number");
  return v;
}

const POSITION = /^\d+(\.\d+)?$/;

function position(v: unknown, path: string): string {
  if (!POSITION.test(str(v, path))) bad(path, "expected a decimal position");
  return v as string;
}

function conversationKey(v: unknown): string {
  const key = str(v, "conversation");
  try {
    parseConversationKey(key);
  } catch {
    bad("conversation", "expected platform:workspace:channel:thread");
  }
  return key;
}

function speaker(v: unknown): InboundMessage["speaker"] {
  const s = record(v, "speaker");
  return {
    userKey: nonEmpty(s.userKey, "speaker.userKey"),
    displayName: str(s.displayName, "speaker.displayName"),
  };
}

const KINDS: ReadonlySet<unknown> = new Set(placeKind.options);

function place(v: unknown): Place {
  const p = record(v, "place");
  if (!KINDS.has(p.kind)) bad("place.kind", "expected dm, private or public");
  const out: Place = { kind: p.kind as Place["kind"], workspace: nonEmpty(p.workspace, "place.workspace") };
  if (p.guessed !== undefined) {
    if (p.guessed !== true) bad("place.guessed", "expected true");
    out.guessed = true;
  }
  return out;
}

function file(v: unknown, i: number): InboundFile {
  const at = `files.${i}`;
  const f = record(v, at);
  const size = finite(f.size, `${at}.size`);
  if (!Number.isInteger(size) || size < 0) bad(`${at}.size`, "expected a non-negative integer");
  const out: InboundFile = {
    id: nonEmpty(f.id, `${at}.id`),
    name: str(f.name, `${at}.name`),
    type: str(f.type, `${at}.type`),
    size,
    url: str(f.url, `${at}.url`),
  };
  if (f.refused !== undefined) out.refused = str(f.refused, `${at}.refused`);
  return out;
}

/**
 * The loop's input for a message, with any earlier thread messages kept apart from its own text; what
 * the user has open beside the conversation (Slack's assistant panel) comes with them, as a note.
 */
export function toTurnInput(m: InboundMessage): TurnInput {
  const context = [
    ...(m.context ?? []),
    ...(m.viewing ? [`(The user has ${m.viewing} open beside this conversation.)`] : []),
  ];
  return {
    text: m.text,
    speaker: m.speaker,
    ...(m.files?.length ? { files: m.files } : {}),
    ...(context.length ? { context } : {}),
  };
}

/**
 * The place of a journaled message. Messages journaled before places existed have none: a DM stays
 * a DM, anything shared is taken as public (the turn then shows the least memory).
 */
export function placeOf(m: InboundMessage): Place {
  if (m.place) return m.place;
  const { workspace } = parseConversationKey(m.conversation);
  return { kind: m.shared ? "public" : "dm", workspace };
}

/** What the loop is told when it resumes a turn a restart cut short. */
export const RESUME_NOTE =
  "(Neo restarted while working on this; whatever was in progress then was lost (tool calls that were running " +
  "have error results above). Continue from where you left off and give your answer.)";

/**
 * How many leading pending messages belong in the turn `opening` runs: the requester's own, up to
 * the first message of anyone else. One turn, one speaker: other people's messages wait for their
 * own turn, and transcript order stays platform order.
 */
export function requesterRun(pending: readonly InboundMessage[], opening: InboundMessage): number {
  const i = pending.findIndex((m) => m.speaker.userKey !== opening.speaker.userKey);
  return i === -1 ? pending.length : i;
}
