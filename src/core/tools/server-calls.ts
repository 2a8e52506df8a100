/**
 * The requests made to a connected MCP server: `tools/list` (every page) and `tools/call` with its
 * timeout and cancellation. A JSON-RPC error from the server is an in-band result; a transport
 * failure, timeout or cancellation is a `ToolTransportError`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type {
  CallToolResult,
  Progress,
  ProgressNotification,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
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

/** How one call runs: its turn's signal, and where the server's progress reports go. */
export interface CallOptions {
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

/**
 * The progress callbacks of running calls, by the `progressToken` their request carries. Tokens are
 * ours, not the SDK's (its `onprogress` copies the params, and `cancel.ts` finds a call's request id
 * by the params object it was given).
 */
const progressHandlers = new Map<string, (progress: Progress) => void>();
let lastToken = 0;

/** A server's `notifications/progress`: to the call that asked for it; unknown tokens are dropped. */
export function onProgressNotification(n: ProgressNotification): void {
  const { progressToken, ...progress } = n.params;
  progressHandlers.get(String(progressToken))?.(progress);
}

/** Call one tool on `c`; `label` (the advertised name) names it in errors. */
export async function callTool(
  c: Client,
  timeoutMs: number,
  tool: string,
  args: Record<string, unknown>,
  label: string,
  { signal, onProgress }: CallOptions = {},
): Promise<CallToolResult> {
  // Loaded by the start that made `c` ready.
  const { ErrorCode, McpError } = (await loadMcpSdk()).types;
  if (signal?.aborted) throw new ToolTransportError(`${label} failed: cancelled`, label);
  const token = onProgress ? `neo-${++lastToken}` : undefined;
  const params = token
    ? { name: tool, arguments: args, _meta: { progressToken: token } }
    : { name: tool, arguments: args };
  if (token && onProgress) progressHandlers.set(token, onProgress);
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
  } finally {
    if (token) progressHandlers.delete(token);
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
