/** The `/neo` command layer (see `types.ts` for the contract). */

export * from "./memory.js";
export * from "./memory-view.js";
export { parseCommand, USAGE } from "./parse.js";
export { helpText, needsAdmin, runCommand, runConfirmed } from "./run.js";
export * from "./types.js";
