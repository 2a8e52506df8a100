/**
 * Where a turn's Status goes on Slack. Status is progress, not content: it may be merged or dropped,
 * never at the expense of the answer. In a busy workspace it gives way (rate-gate.ts): a status is
 * shown only when the room of the call that takes it away is reserved, and its post and edits are
 * optional (sent only with room now, never ahead of an answer waiting in the channel's pacing).
 * The sinks:
 * - thread: one message in the thread, posted only once the episode has lasted `STATUS_DELAY_MS`
 *   (an answer sooner needs no status: none is posted), edited in place (edits merged: at most one
 *   in flight per message, carrying the latest text; an edit with no room is dropped, the next
 *   status tries again), removed after the answer is posted; never posted at all when the answer
 *   lands first, when the channel has no room for it now, or when `chat.delete` has no room to
 *   reserve for its removal;
 * - assistant (a thread of Slack's assistant panel): the thread's own status
 *   (`assistant.threads.setStatus`, shown as "Neo is …" under the thread), at most one call in
 *   flight and the latest text next, each optional; shown only with the room of its clearing
 *   reserved, and cleared (with that room) after the answer is posted;
 * - ephemeral (`/neo ask`): the command's ephemeral reply replaced through `response_url`, which
 *   Slack allows five times, so at most `MAX_EPHEMERAL_EDITS` edits plus the final removal.
 */
import { log } from "../../core/log.js";
import { escapeMrkdwn } from "./mrkdwn.js";
import type { SlackOutbound } from "./outbound.js";
import type { Reservation } from "./rate-gate.js";

export interface StatusSink {
  /** Show `text` as the current status (returns at once; delivery is coalesced). */
  show(text: string): void;
  /** End this status episode now; the returned function removes it (call after the answer is posted). */
  stop(): () => Promise<void>;
}

/** Status lines are short; keep them well under chat.update's 4,000-character limit. */
const STATUS_MAX = 300;

export function statusText(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  const cut = one.length > STATUS_MAX ? `${one.slice(0, STATUS_MAX - 1)}…` : one;
  return `_${escapeMrkdwn(cut)}_`;
}

/** How long a status waits to be shown: a turn answered sooner needed none (its answer says it all). */
export const STATUS_DELAY_MS = 1000;

/** The status message, once its post was sent for. */
interface Shown {
  ts: Promise<string | undefined>;
  /** The room of the `chat.delete` that removes it. */
  removal: Reservation;
}

interface Episode {
  text: string;
  sent: string;
  /** Until the delay has passed, nothing is posted. */
  timer: NodeJS.Timeout | null;
  shown: Shown | null;
  done: boolean;
  editing: boolean;
  failed: boolean;
}

export function createThreadStatus(
  out: SlackOutbound,
  channel: string,
  threadTs: string,
  delayMs = STATUS_DELAY_MS,
): StatusSink {
  let ep: Episode | null = null;

  const edit = (e: Episode): void => {
    const shown = e.shown;
    if (!shown || e.editing || e.done || e.failed || e.text === e.sent) return;
    e.editing = true;
    let sent = false;
    void (async () => {
      const ts = await shown.ts;
      if (ts === undefined) return;
      sent = await out.update(
        channel,
        ts,
        () => {
          e.sent = e.text;
          return { text: statusText(e.text) };
        },
        { skip: () => e.done || e.text === e.sent, optional: true },
      );
    })()
      .catch((err: unknown) => {
        // Status is progress only: stop editing this message rather than retry into a failure.
        e.failed = true;
        log.warn({ err, channel }, "slack status edit failed; no more edits to this status");
      })
      .finally(() => {
        e.editing = false;
        // A newer text came while this one went; a dropped edit waits for the next status instead.
        if (sent) edit(e);
      });
  };

  /**
   * Post the status message: only with the room of its removal reserved (else it would outlive its
   * answer), and as an optional call, so it never waits in the channel's pacing nor takes the room
   * of an answer waiting there. Dropped unsent, the next status tries again.
   */
  const place = (e: Episode): void => {
    if (e.done || e.timer || e.shown) return;
    const removal = out.reserve("chat.delete");
    if (!removal) return;
    e.sent = e.text;
    const shown: Shown = {
      removal,
      ts: out
        .post(
          { channel, thread_ts: threadTs, text: statusText(e.text) },
          { optional: true, skip: () => e.done },
        )
        .catch((err: unknown) => {
          log.warn({ err, channel }, "slack status post failed");
          return undefined;
        })
        .then((ts) => {
          if (ts === undefined) {
            removal.release();
            if (e.shown === shown) e.shown = null;
          }
          return ts;
        }),
    };
    e.shown = shown;
  };

  return {
    show: (text) => {
      if (ep) {
        ep.text = text;
        if (ep.shown) edit(ep);
        else place(ep);
        return;
      }
      const e: Episode = {
        text,
        sent: "",
        timer: null,
        shown: null,
        done: false,
        editing: false,
        failed: false,
      };
      ep = e;
      if (delayMs > 0) {
        e.timer = setTimeout(() => {
          e.timer = null;
          place(e);
        }, delayMs);
        e.timer.unref();
      }
      place(e);
    },
    stop: () => {
      const e = ep;
      ep = null;
      if (!e) return async () => {};
      e.done = true;
      if (e.timer) clearTimeout(e.timer);
      e.timer = null;
      return async () => {
        const shown = e.shown;
        if (!shown) return;
        const ts = await shown.ts;
        if (ts !== undefined) await out.delete(channel, ts, { reservation: shown.removal });
      };
    },
  };
}

/** Assistant statuses are one short line. */
const ASSISTANT_STATUS_MAX = 100;

export function createAssistantStatus(out: SlackOutbound, channel: string, threadTs: string): StatusSink {
  let latest: string | null = null;
  let sending: Promise<void> | null = null;
  /**
   * This episode: the room of the call that clears its status (held from its first status), and
   * whether any status reached Slack (else there is nothing to clear).
   */
  let ep: { clearing: Reservation; shown: boolean } | null = null;

  const pump = (): void => {
    const e = ep;
    if (sending || latest === null || !e) return;
    const status = latest;
    latest = null;
    sending = out
      .assistantStatus(channel, threadTs, status, { optional: true })
      .then((went) => {
        if (went) e.shown = true;
      })
      .catch((err: unknown) => log.warn({ err, channel }, "slack assistant status failed"))
      .finally(() => {
        sending = null;
        pump();
      });
  };

  return {
    show: (text) => {
      const one = text.replace(/\s+/g, " ").trim();
      latest = one.length > ASSISTANT_STATUS_MAX ? `${one.slice(0, ASSISTANT_STATUS_MAX - 1)}…` : one;
      // Shown only if it can be cleared at once after the answer (a busy workspace: not shown).
      if (!ep) {
        const clearing = out.reserve("assistant.threads.setStatus");
        if (clearing) ep = { clearing, shown: false };
      }
      pump();
    },
    stop: () => {
      latest = null;
      const e = ep;
      ep = null;
      if (!e) return async () => {};
      return async () => {
        while (sending) await sending;
        if (e.shown) await out.assistantStatus(channel, threadTs, "", { reservation: e.clearing });
        else e.clearing.release();
      };
    },
  };
}

/** Status that goes to `assistant` while `useAssistant()` holds, else to `thread`. */
export function eitherStatus(
  useAssistant: () => boolean,
  assistant: StatusSink,
  thread: StatusSink,
): StatusSink {
  return {
    show: (text) => (useAssistant() ? assistant : thread).show(text),
    stop: () => {
      const a = assistant.stop();
      const t = thread.stop();
      return async () => {
        await Promise.all([a(), t()]);
      };
    },
  };
}

/** Posts to a slash command's `response_url` (Bolt's `respond`). */
export type Respond = (message: Record<string, unknown>) => Promise<unknown>;

export const MAX_EPHEMERAL_EDITS = 3;

export function createEphemeralStatus(respond: Respond): StatusSink {
  let edits = 0;
  let latest: string | null = null;
  let inFlight: Promise<void> = Promise.resolve();
  let sending = false;
  let done = false;

  const pump = (): void => {
    if (sending || done || latest === null || edits >= MAX_EPHEMERAL_EDITS) return;
    sending = true;
    const text = latest;
    latest = null;
    edits++;
    inFlight = respond({ response_type: "ephemeral", replace_original: true, text: statusText(text) })
      .then(() => undefined)
      .catch((err: unknown) => log.warn({ err }, "slack ephemeral status failed"))
      .finally(() => {
        sending = false;
        pump();
      });
  };

  return {
    show: (text) => {
      latest = text;
      pump();
    },
    stop: () => {
      done = true;
      return async () => {
        await inFlight;
        await respond({ response_type: "ephemeral", delete_original: true });
      };
    },
  };
}
