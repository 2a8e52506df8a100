/** Slack's published rate tiers for the Web API methods Neo calls, as rules for the rate gate. */
import type { RateRule } from "../rate-gate/key-state.js";

/** Slack's published tiers for the methods Neo uses (per workspace unless noted). */
export interface SlackRateRules {
  /** `chat.postMessage`: about one per second per channel, short bursts allowed. */
  postPerChannel: RateRule;
  /** `chat.update`: Tier 3, ~50/min. */
  update: RateRule;
  /** `chat.delete`: Tier 3. */
  delete: RateRule;
  /** `chat.postEphemeral`: Tier 4, ~100/min. */
  ephemeral: RateRule;
  /** `users.info`: Tier 4. */
  usersInfo: RateRule;
  /** `conversations.info`: Tier 3. */
  conversationsInfo: RateRule;
  /** `conversations.replies`: Tier 3. */
  replies: RateRule;
  /** `conversations.history`: Tier 3. */
  history: RateRule;
  /** `reactions.add`: Tier 3. */
  reactions: RateRule;
  /** A file upload (`files.getUploadURLExternal` + `files.completeUploadExternal`): Tier 2/3, ~20/min. */
  upload: RateRule;
  /** `chat.startStream` and `chat.stopStream`: Tier 2, ~20/min. */
  stream: RateRule;
  /** `chat.appendStream`: Tier 4, ~100/min. */
  appendStream: RateRule;
  /** `assistant.threads.setStatus` / `setSuggestedPrompts` / `setTitle`: Tier 3, ~50/min each. */
  assistant: RateRule;
}

export const SLACK_RATE_RULES: SlackRateRules = {
  // One a second on average, with the short burst Slack grants: a status line and the answer right
  // after it would otherwise hold the answer back a whole second.
  postPerChannel: { limit: 3, windowMs: 3000 },
  update: { limit: 50, windowMs: 60_000 },
  delete: { limit: 50, windowMs: 60_000 },
  ephemeral: { limit: 100, windowMs: 60_000 },
  usersInfo: { limit: 100, windowMs: 60_000 },
  conversationsInfo: { limit: 50, windowMs: 60_000 },
  replies: { limit: 50, windowMs: 60_000 },
  history: { limit: 50, windowMs: 60_000 },
  reactions: { limit: 50, windowMs: 60_000 },
  upload: { limit: 20, windowMs: 60_000 },
  stream: { limit: 20, windowMs: 60_000 },
  appendStream: { limit: 100, windowMs: 60_000 },
  assistant: { limit: 50, windowMs: 60_000 },
};
