/**
 * What a listener's failure does: an event from a workspace without an installation is only
 * logged (nothing can answer it); anything else is counted by payload kind and rethrown, so the
 * receiver answers 500 and Slack retries what was not journaled.
 */
import type { App, CodedError } from "@slack/bolt";
import { log } from "../../../core/log.js";
import { createPayloadErrors } from "../../payload-errors.js";

/** A payload's kind for the failure count: the event type, the interaction type, or the command. */
export function payloadKind(body: unknown): string {
  const b = (body ?? {}) as { type?: unknown; event?: { type?: unknown }; command?: unknown };
  if (b.type === "event_callback" && typeof b.event?.type === "string") return `event:${b.event.type}`;
  if (typeof b.type === "string") return b.type;
  return typeof b.command === "string" ? "slash_command" : "unknown";
}

export function handleAppErrors(app: App): void {
  const payloadErrors = createPayloadErrors("slack");
  app.error(async ({ error: err, body }: { error: CodedError; body: unknown }) => {
    if (err.code === "slack_bolt_authorization_error") {
      // An event from a workspace without an installation: nothing to answer it with, no retry helps.
      log.warn({ err: err.message }, "slack: event from a workspace Neo is not installed in");
      return;
    }
    payloadErrors(payloadKind(body), err);
    throw err; // the receiver answers 500, so Slack retries what was not journaled
  });
}
