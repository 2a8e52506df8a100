/** The `/neo` command layer (see `types.ts` for the contract). */

export { helpText } from "./help.js";
export * from "./memory.js";
export * from "./memory-view.js";
export { parseCommand, USAGE } from "./parse.js";
export { needsAdmin, runCommand, runConfirmed } from "./run.js";
export * from "./types.js";
