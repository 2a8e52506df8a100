/**
 * The requests made to a connected MCP server: `tools/list` (every page) and `tools/call` with its
 * timeout and cancellation. A JSON-RPC error from the server is an in-band result; a transport
 * failure, timeout or cancellation is a `ToolTransportError`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type {
  CallToolResult,
  ElicitRequest,
  ElicitResult,
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
  /** Where the server's `elicitation/create` during this call goes: the turn's requester. */
  elicit?: CallElicitor;
}

/** The requester of a call (a user key) and how to ask them. */
export interface CallElicitor {
  requester: string;
  ask: (params: ElicitRequest["params"]) => Promise<ElicitResult>;
}

/**
 * The running calls of each connection that can be asked a question. MCP does not say which call a
 * server's request belongs to (over stdio nothing relates them), so a question goes to the
 * requester only when every running call on that connection is theirs (the newest call asks);
 * otherwise nobody is shown it: a question is never shown to the wrong person.
 */
const elicitors = new WeakMap<Client, Set<CallElicitor>>();

/** Answer a server's `elicitation/create` on `c`; `alias` names the server in errors. */
export function answerElicitation(
  c: Client,
  alias: string,
  params: ElicitRequest["params"],
): Promise<ElicitResult> {
  const running = [...(elicitors.get(c) ?? [])];
  const owners = new Set(running.map((e) => e.requester));
  if (owners.size !== 1) {
    const why = running.length
      ? "calls of several people are running on it, so Neo cannot tell whose question this is"
      : "no call of a person who can answer is running on it";
    return Promise.reject(new Error(`Neo did not show the question of server "${alias}": ${why}`));
  }
  return (running.at(-1) as CallElicitor).ask(params);
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
  { signal, onProgress, elicit }: CallOptions = {},
): Promise<CallToolResult> {
  // Loaded by the start that made `c` ready.
  const { ErrorCode, McpError } = (await loadMcpSdk()).types;
  if (signal?.aborted) throw new ToolTransportError(`${label} failed: cancelled`, label);
  const token = onProgress ? `neo-${++lastToken}` : undefined;
  const params = token
    ? { name: tool, arguments: args, _meta: { progressToken: token } }
    : { name: tool, arguments: args };
  if (token && onProgress) progressHandlers.set(token, onProgress);
  const asking = elicitors.get(c) ?? new Set<CallElicitor>();
  if (elicit) {
    elicitors.set(c, asking);
    asking.add(elicit);
  }
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
    if (elicit) asking.delete(elicit);
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
