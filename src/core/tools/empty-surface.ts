/**
 * A tool surface with no tools. The console runs on it until the MCP-backed surface is wired in
 * `src/main.ts`; the model simply has nothing to call.
 */
import type { ToolSurface } from "./types.js";

export const emptyToolSurface: ToolSurface = {
  schemas: () => [],
  dispatch: async (name) => ({ content: `Unknown tool ${name}: no tools are available.`, isError: true }),
};
