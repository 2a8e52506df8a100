/**
 * The requests made to a connected MCP server: `tools/list` (every page) and `tools/call` with its
 * timeout and cancellation. A JSON-RPC error from the server is an in-band result; a transport
 * failure, timeout or cancellation is a `ToolTransportError`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { CallCancelledError, requestIdOf, untilCancelled } from "./cancel.js";
import { loadMcpSdk } from "./mcp-sdk.js";
import { ToolTransportError } from "./types.js";

/** Every tool the server lists; `timeoutMs` bounds each page. */
export async function listAllTools(c: Client, timeoutMs: number, signal?: AbortSignal): Promise<Tool[]> {
  const all: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await c.listTools(cursor ? { cursor } : undefined, {
      timeout: timeoutMs,
      ...(signal ? { signal } : {}),
    });
    all.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/** Call one tool on `c`; `label` (the advertised name) names it in errors. */
export async function callTool(
  c: Client,
  timeoutMs: number,
  tool: string,
  args: Record<string, unknown>,
  label: string,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  // Loaded by the start that made `c` ready.
  const { ErrorCode, McpError } = (await loadMcpSdk()).types;
  if (signal?.aborted) throw new ToolTransportError(`${label} failed: cancelled`, label);
  const params = { name: tool, arguments: args };
  try {
    const sent = c.callTool(params, undefined, { timeout: timeoutMs });
    const result = await (signal
      ? untilCancelled(sent, signal, (reason) => tellCancelled(c, params, reason))
      : sent);
    if ("content" in result && Array.isArray(result.content)) return result as CallToolResult;
    // Pre-2024-11 servers answer `{ toolResult }`.
    return { content: [{ type: "text", text: JSON.stringify(result.toolResult ?? result) }] };
  } catch (err) {
    if (
      err instanceof McpError &&
      err.code !== ErrorCode.ConnectionClosed &&
      err.code !== ErrorCode.RequestTimeout
    ) {
      // The server answered with a JSON-RPC error (bad arguments, tool failure): in-band.
      return { content: [{ type: "text", text: `error from ${label}: ${err.message}` }], isError: true };
    }
    const why =
      err instanceof CallCancelledError
        ? "cancelled"
        : err instanceof McpError && err.code === ErrorCode.RequestTimeout
          ? `timed out after ${timeoutMs} ms`
          : messageOf(err);
    throw new ToolTransportError(`${label} failed: ${why}`, label, { cause: err });
  }
}

/** Tell the server to stop a cancelled call (the SDK keeps waiting for it until its timeout). */
function tellCancelled(c: Client, params: object, reason: string): void {
  const requestId = requestIdOf(params);
  if (requestId === undefined) return;
  c.notification({ method: "notifications/cancelled", params: { requestId, reason } }).catch(
    // The connection is gone: so is the call.
    () => {},
  );
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
