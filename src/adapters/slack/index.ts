/** The Slack adapter's public surface (wired in `src/app/server.ts`). */

export { SLACK_RETRY_CONFIG } from "./adapter/bolt-app.js";
export { type SlackAdapterConfig, type SlackAdapterOptions, SlackConfigError } from "./adapter/options.js";
export { createSlackAdapter, type SlackAdapter } from "./adapter.js";
export { SLACK_RATE_RULES, type SlackRateRules } from "./outbound/rules.js";
