/**
 * A platform payload whose handling threw: counted every time (`neo_event_errors_total`), logged
 * once per payload kind per adapter (a flood of one odd shape must not flood the log), and then
 * the process keeps serving. The kind is the gateway event name or the Slack payload type, so the
 * label stays bounded; anything else is `other`.
 */
import { log } from "../core/log.js";
import { metrics } from "../ops/metrics.js";

export type PayloadErrorSink = (kind: string, err: unknown, fields?: Record<string, unknown>) => void;

const KIND = /^[A-Za-z_.:]{1,48}$/;

export function createPayloadErrors(platform: "slack" | "discord"): PayloadErrorSink {
  const said = new Set<string>();
  return (rawKind, err, fields = {}) => {
    const kind = KIND.test(rawKind) ? rawKind : "other";
    metrics.eventErrors.inc({ platform, kind });
    if (said.has(kind)) {
      log.debug({ platform, kind, err, ...fields }, `${platform}: payload handling failed again`);
      return;
    }
    said.add(kind);
    log.error(
      { platform, kind, err, ...fields },
      `${platform}: payload handling failed; still serving (later failures of this kind are counted in neo_event_errors_total)`,
    );
  };
}
