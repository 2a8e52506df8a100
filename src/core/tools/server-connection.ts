/**
 * One MCP server's lifecycle: start it (bounded by its spawn timeout), list its tools, follow
 * `tools/list_changed`, and restart it on the next call after it died (bounded attempts). Never
 * throws from `start`; failures become warnings. Its transport is `server-transport.ts`; the
 * requests themselves are `server-calls.ts`.
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { isStdio, type ServerSpec } from "./manifest.js";
import { loadMcpSdk } from "./mcp-sdk.js";
import {
  answerElicitation,
  type CallOptions,
  callTool,
  listAllTools,
  messageOf,
  onProgressNotification,
} from "./server-calls.js";
import { declineServerRequest } from "./server-requests.js";
import { openTransport } from "./server-transport.js";
import { ToolTransportError } from "./types.js";

export type ServerStatus = "starting" | "ready" | "dead" | "failed" | "disabled" | "closed";

/** What operators see about one server (`/neo status`). */
export interface ServerInfo {
  alias: string;
  transport: "stdio" | "http";
  status: ServerStatus;
  toolCount: number;
  /** Restarts since the last start or reload. */
  restarts: number;
  /** Why it is failed or dead, when it is. */
  error?: string;
  /** `user`: one process per user (status and tools are those of the start-up probe). */
  scope?: "user";
  /** Per-user servers: user processes running now. */
  instances?: number;
  /** Per-user servers: calls waiting for room under `NEO_TOOL_USER_MAX_PROCESSES`. */
  waiting?: number;
}

export interface ServerConnectionOptions {
  alias: string;
  spec: ServerSpec;
  env: Readonly<Record<string, string | undefined>>;
  spawnTimeoutMs: number;
  callTimeoutMs: number;
  maxRestarts: number;
  /** The tool list changed (refresh, restart). */
  onToolsChanged: () => void;
  onWarning: (message: string) => void;
  /** An `"auth": "oauth"` server's credentials for whoever this connection acts as. */
  authProvider?: OAuthClientProvider;
}

export interface ServerConnection {
  readonly alias: string;
  /** Start (or restart) the server. Resolves once ready or failed; never rejects. */
  start(): Promise<void>;
  /** Call one tool. Rejects with `ToolTransportError` on transport failure or timeout. */
  call(
    tool: string,
    args: Record<string, unknown>,
    label: string,
    options?: CallOptions,
  ): Promise<CallToolResult>;
  tools(): readonly Tool[];
  info(): ServerInfo;
  close(): Promise<void>;
}

const STDERR_TAIL = 600;

export function createServerConnection(opts: ServerConnectionOptions): ServerConnection {
  const { alias, spec } = opts;
  let status: ServerStatus = spec.disabled ? "disabled" : "starting";
  let client: Client | undefined;
  let tools: readonly Tool[] = [];
  let restarts = 0;
  let error: string | undefined;
  let stderrTail = "";
  let generation = 0;
  let starting: Promise<void> | undefined;

  const withStderr = (msg: string) => (stderrTail.trim() ? `${msg}; stderr: ${stderrTail.trim()}` : msg);

  async function refresh(c: Client, gen: number): Promise<void> {
    try {
      const next = await listAllTools(c, opts.callTimeoutMs);
      if (gen !== generation) return;
      tools = next;
      opts.onToolsChanged();
    } catch (err) {
      if (gen === generation) opts.onWarning(`server "${alias}": refreshing tools failed: ${messageOf(err)}`);
    }
  }

  async function startOnce(): Promise<void> {
    const gen = ++generation;
    stderrTail = "";
    status = "starting";
    const sdk = await loadMcpSdk();
    // Elicitation is the one capability: a server may ask the person whose call it is serving
    // (form or link). The SDK fills an accepted form's omitted fields from the schema's defaults.
    const c = new sdk.Client(
      { name: "neo", version: "0.1.0" },
      { capabilities: { elicitation: { form: { applyDefaults: true }, url: {} } } },
    );
    const abort = new AbortController();
    let transport: Transport | undefined;
    const timer = setTimeout(() => {
      // After a failed connect the SDK ends stdin and waits 2 s before signalling the child; a
      // server that never answered gets SIGTERM now, so it cannot outlive a process that exits.
      const pid = transport instanceof sdk.StdioClientTransport ? transport.pid : null;
      abort.abort();
      if (pid) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // already gone
        }
      }
    }, opts.spawnTimeoutMs);
    try {
      transport = await openTransport(
        sdk,
        alias,
        spec,
        opts.env,
        (text) => {
          // Keep the tail of stderr: it is what explains a crash or a failed start.
          stderrTail = (stderrTail + text).slice(-STDERR_TAIL);
        },
        opts.authProvider,
      );
      c.onclose = () => {
        // Only a server that was serving can die; one that exits while starting fails `connect`.
        if (gen !== generation || status !== "ready") return;
        status = "dead";
        error = withStderr("the server exited");
        opts.onWarning(`server "${alias}" died; it will be restarted on its next call (${error})`);
      };
      c.setNotificationHandler(sdk.types.ToolListChangedNotificationSchema, () => refresh(c, gen));
      c.setNotificationHandler(sdk.types.ProgressNotificationSchema, onProgressNotification);
      c.setRequestHandler(sdk.types.ElicitRequestSchema, (req) => answerElicitation(c, alias, req.params));
      // Sampling and roots are not declared, so every other server request but ping lands here.
      c.fallbackRequestHandler = (request) => declineServerRequest(sdk, alias, request.method);
      const options = { timeout: opts.spawnTimeoutMs, signal: abort.signal };
      await c.connect(transport, options);
      const listed = await listAllTools(c, opts.callTimeoutMs, abort.signal);
      if (gen !== generation) return;
      client = c;
      tools = listed;
      status = "ready";
      error = undefined;
      opts.onToolsChanged();
    } catch (err) {
      if (gen !== generation) return;
      status = "failed";
      error = withStderr(
        abort.signal.aborted ? `did not start within ${opts.spawnTimeoutMs} ms` : messageOf(err),
      );
      await c.close().catch(() => {});
      opts.onWarning(`server "${alias}" failed to start and is skipped: ${error}`);
    } finally {
      clearTimeout(timer);
    }
  }

  function start(): Promise<void> {
    if (spec.disabled || status === "closed") return Promise.resolve();
    starting ??= startOnce().finally(() => {
      starting = undefined;
    });
    return starting;
  }

  /** Restart a dead server; concurrent callers share one attempt. */
  async function restart(): Promise<void> {
    if (restarts >= opts.maxRestarts) {
      status = "failed";
      error = `died and was restarted ${restarts} times; reload to try again`;
      opts.onWarning(`server "${alias}" ${error}`);
      return;
    }
    restarts += 1;
    const old = client;
    client = undefined;
    await old?.close().catch(() => {});
    opts.onWarning(`server "${alias}" restarting (attempt ${restarts} of ${opts.maxRestarts})`);
    await startOnce();
    if ((status as ServerStatus) !== "failed") return;
    // A failed restart leaves it dead (tried again on the next call) until attempts run out.
    if (restarts < opts.maxRestarts) {
      status = "dead";
      return;
    }
    error = `gave up after ${restarts} restart attempts (${error}); reload to try again`;
    opts.onWarning(`server "${alias}" ${error}`);
  }

  async function ensureReady(label: string): Promise<Client> {
    if (starting) await starting;
    if (status === "dead") {
      starting ??= restart().finally(() => {
        starting = undefined;
      });
      await starting;
    }
    if (status !== "ready" || !client) {
      throw new ToolTransportError(`server "${alias}" is ${status}: ${error ?? "not running"}`, label);
    }
    return client;
  }

  /** Not async itself: a tool call is the hot path (bench/tools). */
  function call(
    tool: string,
    args: Record<string, unknown>,
    label: string,
    options?: CallOptions,
  ): Promise<CallToolResult> {
    if (status === "ready" && client && !starting)
      return callTool(client, opts.callTimeoutMs, tool, args, label, options);
    return ensureReady(label).then((c) => callTool(c, opts.callTimeoutMs, tool, args, label, options));
  }

  async function close(): Promise<void> {
    generation += 1;
    status = "closed";
    const c = client;
    client = undefined;
    await c?.close().catch(() => {});
  }

  return {
    alias,
    start,
    call,
    tools: () => tools,
    info: () => ({
      alias,
      transport: isStdio(spec) ? "stdio" : "http",
      status,
      toolCount: tools.length,
      restarts,
      ...(error ? { error } : {}),
    }),
    close,
  };
}
