/** The Slack adapter's public surface (wired in `src/main.ts`). */
export {
  createSlackAdapter,
  SLACK_RETRY_CONFIG,
  type SlackAdapter,
  type SlackAdapterConfig,
  type SlackAdapterOptions,
  SlackConfigError,
} from "./adapter.js";
export { SLACK_RATE_RULES, type SlackRateRules } from "./outbound/rules.js";
