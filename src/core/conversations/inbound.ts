/**
 * Inbound messages at the boundary: validated before anything is journaled, and turned into the
 * loop's `TurnInput` with any earlier thread messages set out as context.
 */
import { z } from "zod";
import type { TurnInput } from "../agent/types.js";
import { parseConversationKey } from "../keys.js";
import { type Place, placeSchema } from "../place.js";
import type { InboundMessage } from "./types.js";

const positionSchema = z.string().regex(/^\d+(\.\d+)?$/, "expected a decimal position");

const inboundSchema = z.object({
  id: z.string().min(1),
  conversation: z.string().refine((k) => {
    try {
      parseConversationKey(k);
      return true;
    } catch {
      return false;
    }
  }, "expected platform:workspace:channel:thread"),
  speaker: z.object({ userKey: z.string().min(1), displayName: z.string() }),
  text: z.string(),
  shared: z.boolean(),
  files: z
    .array(
      z.object({
        id: z.string().min(1),
        name: z.string(),
        type: z.string(),
        size: z.number().int().nonnegative(),
        url: z.string(),
        refused: z.string().optional(),
      }),
    )
    .optional(),
  place: placeSchema,
  context: z.array(z.string()).optional(),
  position: positionSchema.optional(),
  through: positionSchema.optional(),
  viewing: z.string().max(200).optional(),
  receivedAt: z.number(),
});

export class InboundMessageError extends Error {
  readonly code = "BAD_INBOUND";
}

/** Validate an adapter's message; throws `InboundMessageError` naming the bad field. */
export function parseInbound(message: unknown): InboundMessage {
  const parsed = inboundSchema.safeParse(message);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InboundMessageError(`inbound message: ${issue.path.join(".") || "value"}: ${issue.message}`);
  }
  return parsed.data as InboundMessage;
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
