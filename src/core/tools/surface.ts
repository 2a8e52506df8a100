/**
 * The MCP-backed `ToolSurface`: servers from the manifest, Natural/Escalate classification, bound
 * names, advertised schemas and dispatch. See `createToolSurface`.
 */

import type { z } from "zod";
import type { ToolSchema } from "../llm/types.js";
import { log } from "../log.js";
import { classifyTool, effectivePatterns, type ToolClass } from "./classify.js";
import { isStdio, type Manifest, resolveValue } from "./manifest.js";
import { bindNames, type ToolIdentity } from "./naming.js";
import { observeToolCall, UNKNOWN_TOOL_LABEL } from "./observe.js";
import { renderResult, resultFiles, truncateResult } from "./render.js";
import { normalizeInputSchema } from "./schema-normalize.js";
import { createServerConnection, type ServerInfo } from "./server-connection.js";
import {
  conversationLookupArgs,
  conversationLookupSchema,
  coreExecuteArgs,
  coreExecuteSchema,
  describeArgsError,
  memoryRecallArgs,
  memoryRecallSchema,
} from "./synthetic.js";
import {
  DEFAULT_USER_IDLE_MS,
  DEFAULT_USER_MAX_PROCESSES,
  perUserServer,
  sharedServer,
  type ToolServer,
} from "./tool-server.js";

const intentArg = coreExecuteArgs.transform((a) => a.intent);
const queryArg = memoryRecallArgs.transform((a) => a.query);
const lookupArg = conversationLookupArgs.transform((a) => a.query);

import {
  CONVERSATION_LOOKUP_TOOL,
  CORE_EXECUTE_TOOL,
  MEMORY_RECALL_TOOL,
  type ToolCallContext,
  type ToolResult,
  type ToolSurface,
} from "./types.js";

export const DEFAULT_SPAWN_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_RESTARTS = 3;
const MAX_WARNINGS = 200;

/** A delegate behind a synthetic tool. Its result is shown to the model (cut like any result). */
export type SyntheticDelegate = (input: string, ctx: ToolCallContext) => Promise<ToolResult>;

export interface ToolSurfaceOptions {
  /** The parsed manifest (`loadManifest`). */
  manifest: Manifest;
  /** Where `${VAR}` placeholders are read from. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Replaces the manifest's escalate patterns (`NEO_ESCALATE_PATTERNS`); a server's own list still wins. */
  escalatePatterns?: readonly string[];
  /** Results above this many characters are cut with a marker (`NEO_TOOL_RESULT_MAX_CHARS`). */
  resultMaxChars: number;
  /** Per-call timeout in ms (`NEO_TOOL_TIMEOUT_MS`); also bounds each `tools/list` page. */
  callTimeoutMs: number;
  /** Default spawn timeout when the manifest gives none. */
  spawnTimeoutMs?: number;
  /** Restarts of a dead server before it is marked failed (until `reload`). Default 3. */
  maxRestarts?: number;
  /** A user's process of a `scope: user` server is stopped after this long without a call. */
  userIdleMs?: number;
  /** Most users' processes of one `scope: user` server at once (`NEO_TOOL_USER_MAX_PROCESSES`). */
  userMaxProcesses?: number;
  /**
   * `core_execute(intent)` delegate. May be wired after construction through a closure (the
   * embedded executor needs the surface first). Unset: `core_execute` answers in-band that it is
   * unavailable; it is advertised either way.
   */
  coreExecute?: SyntheticDelegate;
  /** `memory_recall(query)` delegate. `memory_recall` is advertised only when this is given. */
  memoryRecall?: SyntheticDelegate;
  /** `conversation_lookup(query)` delegate (the conversation log); advertised only when given. */
  conversationLookup?: SyntheticDelegate;
}

/** One bound MCP tool (`/neo tools`). */
export interface ToolInfo {
  /** The advertised (bound) name, `alias__tool` sanitized. */
  name: string;
  server: string;
  /** The tool's name on its server. */
  tool: string;
  class: ToolClass;
  description: string;
  /** The server's own input schema, unmodified (executors validate arguments against it). */
  inputSchema: Record<string, unknown>;
}

/** A non-fatal problem: a server that failed to start, died, restarted, or could not refresh. */
export interface SurfaceWarning {
  at: number;
  server: string;
  message: string;
}

/** The surface the loop sees, plus operations and the executor's privileged path. */
export interface McpToolSurface extends ToolSurface {
  /**
   * The Escalate tools' schemas, sorted by name. For the embedded executor's planner only:
   * never sent to the turn model.
   */
  escalateSchemas(): ToolSchema[];
  /**
   * Privileged dispatch for the embedded executor, AFTER a human approved the plan: runs any MCP
   * tool, Escalate included, through the same path as `dispatch` (timeout, restart, rendering,
   * cutting). Synthetic names are not accepted here. The loop never calls this; the model cannot
   * reach it (it only ever reaches `dispatch`).
   */
  dispatchPrivileged(name: string, args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolResult>;
  servers(): ServerInfo[];
  /** Every bound MCP tool with its class, sorted by name. */
  tools(): ToolInfo[];
  warnings(): readonly SurfaceWarning[];
  /** Close every server and start them all again (optionally from a new manifest). Clears warnings. */
  reload(manifest?: Manifest): Promise<void>;
  close(): Promise<void>;
}

interface Bound extends ToolInfo {
  conn: ToolServer;
  schema: ToolSchema;
}

/**
 * Start every server in the manifest concurrently (each bounded by its spawn timeout) and resolve
 * with the surface once all have started or failed. A failing server is a warning, never a throw.
 */
export async function createToolSurface(opts: ToolSurfaceOptions): Promise<McpToolSurface> {
  const env = opts.env ?? process.env;
  let manifest = opts.manifest;
  let conns: ToolServer[] = [];
  let bound = new Map<string, Bound>();
  let natural: ToolSchema[] = [];
  let escalate: ToolSchema[] = [];
  let advertised: ToolSchema[] = [];
  let warnings: SurfaceWarning[] = [];

  const warn = (server: string) => (message: string) => {
    log.warn({ server }, message);
    warnings.push({ at: Date.now(), server, message });
    if (warnings.length > MAX_WARNINGS) warnings = warnings.slice(-MAX_WARNINGS);
  };

  function rebind(): void {
    const ids: (ToolIdentity & { conn: ToolServer; index: number })[] = [];
    for (const conn of conns) {
      conn.tools().forEach((t, index) => {
        ids.push({ alias: conn.alias, tool: t.name, conn, index });
      });
    }
    const names = bindNames(ids);
    const next = new Map<string, Bound>();
    for (const [name, id] of names) {
      const { conn, index } = id as (typeof ids)[number];
      const t = conn.tools()[index]!;
      const spec = manifest.servers[conn.alias]!;
      const patterns = effectivePatterns(
        spec.escalatePatterns,
        opts.escalatePatterns,
        manifest.escalatePatterns,
      );
      const description = t.description ?? t.title ?? "";
      next.set(name, {
        name,
        server: conn.alias,
        tool: t.name,
        class: classifyTool(t.name, patterns),
        description,
        inputSchema: t.inputSchema as Record<string, unknown>,
        conn,
        schema: {
          type: "function",
          function: { name, description, parameters: normalizeInputSchema(t.inputSchema) },
        },
      });
    }
    bound = next;
    const sorted = [...next.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    natural = sorted.filter((b) => b.class === "natural").map((b) => b.schema);
    escalate = sorted.filter((b) => b.class === "escalate").map((b) => b.schema);
    advertised = [
      ...natural,
      coreExecuteSchema,
      ...(opts.memoryRecall ? [memoryRecallSchema] : []),
      ...(opts.conversationLookup ? [conversationLookupSchema] : []),
    ];
  }

  async function startAll(): Promise<void> {
    const defaultSpawn = manifest.spawnTimeoutMs ?? opts.spawnTimeoutMs ?? DEFAULT_SPAWN_TIMEOUT_MS;
    conns = Object.entries(manifest.servers).map(([alias, spec]): ToolServer => {
      const connection = {
        alias,
        spec,
        env,
        spawnTimeoutMs: spec.spawnTimeoutMs ?? defaultSpawn,
        callTimeoutMs: opts.callTimeoutMs,
        maxRestarts: opts.maxRestarts ?? DEFAULT_MAX_RESTARTS,
        onToolsChanged: rebind,
        onWarning: warn(alias),
      };
      if (!isStdio(spec) || spec.scope !== "user") return sharedServer(createServerConnection(connection));
      return perUserServer({
        ...connection,
        usersDir: resolveValue(manifest.usersDir, env, alias, "usersDir"),
        idleMs: opts.userIdleMs ?? DEFAULT_USER_IDLE_MS,
        maxInstances: opts.userMaxProcesses ?? DEFAULT_USER_MAX_PROCESSES,
      });
    });
    rebind();
    await Promise.all(conns.map((c) => c.start()));
    rebind();
  }

  const cut = (r: ToolResult): ToolResult => ({
    content: truncateResult(r.content, opts.resultMaxChars),
    isError: r.isError,
    ...(r.files?.length ? { files: r.files } : {}),
  });

  async function callBound(
    b: Bound,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
  ): Promise<ToolResult> {
    // The requester's own process for a per-user server: one dispatch, routed by who asked.
    const result = await b.conn.call(ctx.speaker.userKey, b.tool, args, b.name, ctx.signal);
    const files = resultFiles(result, b.tool);
    return cut({
      content: renderResult(result),
      isError: result.isError === true,
      ...(files.length ? { files } : {}),
    });
  }

  const unknownTool = (name: string): ToolResult => ({
    content: `unknown tool "${name}" — it is not available`,
    isError: true,
  });

  /** Names the model may reach; anything else is counted under one label (bounded cardinality). */
  const labelOf = (name: string): string =>
    name === CORE_EXECUTE_TOOL ||
    (name === MEMORY_RECALL_TOOL && opts.memoryRecall) ||
    (name === CONVERSATION_LOOKUP_TOOL && opts.conversationLookup) ||
    bound.has(name)
      ? name
      : UNKNOWN_TOOL_LABEL;

  /** A synthetic tool's call: its arguments validated (in-band error), then its delegate, cut. */
  async function synthetic(
    tool: string,
    parse: (args: unknown) => z.ZodSafeParseResult<string>,
    delegate: SyntheticDelegate | undefined,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
  ): Promise<ToolResult> {
    const parsed = parse(args);
    if (!parsed.success) return { content: describeArgsError(tool, parsed.error), isError: true };
    if (!delegate) return { content: `${tool} is not available in this deployment`, isError: true };
    return cut(await delegate(parsed.data, ctx));
  }

  const escalateRefusal = (name: string): ToolResult => ({
    content:
      `"${name}" moves funds or needs a signature, so it cannot be called directly. ` +
      `Call ${CORE_EXECUTE_TOOL} with an intent describing exactly what to do (action, amount, asset, recipient); ` +
      "the user will be asked to approve the plan.",
    isError: true,
  });

  /** Where a model's call goes. Not async itself: a tool call is the hot path (bench/tools). */
  function route(name: string, args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolResult> {
    if (name === CORE_EXECUTE_TOOL)
      return synthetic(name, (a) => intentArg.safeParse(a), opts.coreExecute, args, ctx);
    if (name === MEMORY_RECALL_TOOL && opts.memoryRecall)
      return synthetic(name, (a) => queryArg.safeParse(a), opts.memoryRecall, args, ctx);
    if (name === CONVERSATION_LOOKUP_TOOL && opts.conversationLookup)
      return synthetic(name, (a) => lookupArg.safeParse(a), opts.conversationLookup, args, ctx);
    const b = bound.get(name);
    if (!b) return Promise.resolve(unknownTool(name));
    if (b.class === "escalate") return Promise.resolve(escalateRefusal(name));
    return callBound(b, args, ctx);
  }

  /** The one dispatch of the model's calls (synthetic tools included), counted and logged. */
  const dispatch = (name: string, args: Record<string, unknown>, ctx: ToolCallContext) =>
    observeToolCall({ label: labelOf(name), args, ctx }, () => route(name, args, ctx));

  const dispatchPrivileged = (name: string, args: Record<string, unknown>, ctx: ToolCallContext) => {
    const b = bound.get(name);
    return observeToolCall({ label: b ? name : UNKNOWN_TOOL_LABEL, args, ctx, privileged: true }, () =>
      b ? callBound(b, args, ctx) : Promise.resolve(unknownTool(name)),
    );
  };

  async function closeAll(): Promise<void> {
    const old = conns;
    conns = [];
    await Promise.all(old.map((c) => c.close()));
    rebind();
  }

  await startAll();

  return {
    schemas: () => advertised,
    dispatch,
    escalateSchemas: () => escalate,
    dispatchPrivileged,
    servers: () => conns.map((c) => c.info()),
    tools: () =>
      [...bound.values()]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map(({ conn: _c, schema: _s, ...info }) => info),
    warnings: () => warnings,
    async reload(next?: Manifest) {
      await closeAll();
      if (next) manifest = next;
      warnings = [];
      await startAll();
    },
    close: closeAll,
  };
}
