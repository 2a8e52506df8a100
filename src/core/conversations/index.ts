/** The conversations layer's public surface (wired in `src/main.ts`, used by adapters). */
export { ConversationBusyError } from "./controls.js";
export { createConversations } from "./create-conversations.js";
export { InboundMessageError, parseInbound } from "./inbound.js";
export { LogConflictError } from "./journal.js";
export { conversationLimits } from "./limits.js";
export type { LogEntry } from "./log-entry.js";
export { boundEarlier, comparePositions, EARLIER_MESSAGES, EARLIER_TOKENS } from "./position.js";
export { INTERRUPTED_TOOL_RESULT, replay } from "./replay.js";
export type * from "./types.js";
