/**
 * What the pieces of one Slack draft share: its options, the text to show, and the messages shown
 * so far (a stream, or posted parts), mutated in place by the mode writing it.
 */
import { log } from "../../../core/log.js";
import type { SlackAnswerPart } from "../answer-render.js";
import type { MessageMetadata } from "../outbound/messages.js";
import type { SlackOutbound } from "../outbound.js";
import type { Reservation } from "../rate-gate.js";
import type { StatusSink } from "../status.js";
import type { DraftPace } from "./pacer.js";

export interface SlackDraftOptions {
  out: SlackOutbound;
  channel: string;
  /** The thread answers go to; "" when there is none (a DM's top level): no stream, edits. */
  threadTs: string;
  /** The requester: Slack streams to one recipient. */
  recipient: { user: string; team: string };
  pace: DraftPace;
  status: StatusSink;
  /** Metadata for part `i` of the finished answer (its key, for a resumed turn to find). */
  metadata?: (part: number) => MessageMetadata;
  /** Metadata of a draft message posted (edit mode) until it is the answer's (`unfinished.ts`). */
  draftMetadata?: MessageMetadata;
  /** The streaming message started (`unfinished.ts`: it takes no metadata). */
  streamed?(ts: string): Promise<void>;
  /** Say `text` the non-streamed way (nothing was shown yet). */
  say(text: string): Promise<void>;
  /** The answer is complete and `say` may come next (`Reporter.answerSoon`). */
  answerSoon?(): void;
}

export interface Posted {
  ts: string;
  part: SlackAnswerPart;
  /** The room of the `chat.update` that makes this message its part of the answer. */
  landing: Reservation;
}

export interface Stream {
  ts: string;
  /** The safe Markdown appended so far. */
  sent: string;
  /** False once appends failed (Slack ended the stream): the rest shows when the answer is complete. */
  open: boolean;
  /** The rooms of the `chat.stopStream` and the `chat.update` that end it as the answer. */
  stopping: Reservation;
  landing: Reservation;
}

export interface DraftState {
  o: SlackDraftOptions;
  /** The answer so far, as last given. */
  latest: string;
  /** Stream mode; false in edit mode, or once the workspace refused to stream. */
  streaming: boolean;
  stream: Stream | null;
  posted: Posted[];
}

/** A message the answer no longer needs: removed when `chat.delete` has room, nobody waits. */
export const removeLater = ({ out, channel }: SlackDraftOptions, ts: string): void => {
  void out
    .delete(channel, ts)
    .catch((err: unknown) => log.warn({ err, channel }, "slack: a stale draft message could not be removed"));
};
