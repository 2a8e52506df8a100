/**
 * The Reporter on Slack: Say = new message(s) in the thread (mrkdwn, split), Status = a StatusSink,
 * Notice = a visible context message. The status episode ends when an answer is said, and its
 * message is removed once the answer is posted (in the background: the turn does not wait for it).
 */
import { log } from "../../core/log.js";
import type { Reporter } from "../../core/reporter.js";
import { markdownToMrkdwn } from "./mrkdwn.js";
import type { SlackOutbound } from "./outbound.js";
import { splitMrkdwn } from "./split.js";
import type { StatusSink } from "./status.js";

/** Context block elements hold at most 3,000 characters. */
const NOTICE_PART = 2900;

export interface SlackReporterOptions {
  out: SlackOutbound;
  channel: string;
  threadTs: string;
  status: StatusSink;
}

export function createSlackReporter(o: SlackReporterOptions): Reporter {
  const { out, channel, threadTs } = o;
  return {
    say: async (text) => {
      const parts = splitMrkdwn(markdownToMrkdwn(text));
      const removeStatus = o.status.stop();
      try {
        for (const part of parts) await out.post({ channel, thread_ts: threadTs, text: part });
      } finally {
        // Not awaited: chat.delete is Tier 3 (~50/min), and a burst of answers waiting on it held
        // their turns' slots (8 at a time answered 4.4 messages/s). A failed removal is logged.
        void removeStatus().catch((err: unknown) =>
          log.warn({ err, channel }, "slack status removal failed"),
        );
      }
    },
    status: async (text) => {
      o.status.show(text);
    },
    notice: async (text) => {
      for (const part of splitMrkdwn(markdownToMrkdwn(text), NOTICE_PART)) {
        await out.post({
          channel,
          thread_ts: threadTs,
          text: part,
          blocks: [{ type: "context", elements: [{ type: "mrkdwn", text: part }] }],
        });
      }
    },
  };
}
