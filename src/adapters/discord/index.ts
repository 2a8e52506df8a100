/** The Discord adapter's public surface; `src/app/server.ts` wires `createDiscordAdapter`. */
export {
  createDiscordAdapter,
  type DiscordAdapter,
  type DiscordAdapterConfig,
  type DiscordAdapterOptions,
  DiscordStartError,
  MESSAGE_CONTENT_MISSING,
} from "./adapter.js";
export { commandDefinitions } from "./command-definitions.js";
