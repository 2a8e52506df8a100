/**
 * The MCP-backed `ToolSurface`: the manifest's servers started, restarted on `reload` and closed,
 * their tools bound (`bound-tools.ts`) and advertised with the synthetic tools, calls routed by
 * `dispatch.ts`, and non-fatal problems kept as warnings. See `createToolSurface`.
 */

import type { UserKey } from "../keys.js";
import type { ToolSchema } from "../llm/types.js";
import { log } from "../log.js";
import { type BoundTools, bindTools, type ToolInfo } from "./bound-tools.js";
import { createToolDispatch } from "./dispatch.js";
import { isStdio, type Manifest, resolveValue } from "./manifest.js";
import { DEPLOYMENT } from "./oauth/vault.js";
import { createServerConnection, type ServerInfo } from "./server-connection.js";
import {
  DEFAULT_MAX_RESTARTS,
  DEFAULT_SPAWN_TIMEOUT_MS,
  type ToolSurfaceOptions,
} from "./surface-options.js";
import { conversationLookupSchema, coreExecuteSchema, memoryRecallSchema } from "./synthetic.js";
import {
  DEFAULT_USER_IDLE_MS,
  DEFAULT_USER_MAX_PROCESSES,
  perUserServer,
  sharedServer,
  type ToolServer,
} from "./tool-server.js";
import type { ToolCallContext, ToolResult, ToolSurface } from "./types.js";

const MAX_WARNINGS = 200;

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
  /**
   * `user` is signed in to the per-person OAuth servers other than `unauthorized`: those not listed
   * yet list their tools through `user`'s connection, so this turn sees them.
   */
  listFor(user: UserKey, unauthorized: readonly string[]): Promise<void>;
  /** An erasure: every per-user server stops `user`'s process and deletes their folder. */
  eraseUser(user: UserKey): Promise<void>;
  close(): Promise<void>;
}

/**
 * Start every server in the manifest concurrently (each bounded by its spawn timeout) and resolve
 * with the surface once all have started or failed. A failing server is a warning, never a throw.
 */
export async function createToolSurface(opts: ToolSurfaceOptions): Promise<McpToolSurface> {
  const env = opts.env ?? process.env;
  let manifest = opts.manifest;
  let conns: ToolServer[] = [];
  let bound: BoundTools = { byName: new Map(), natural: [], escalate: [] };
  let advertised: ToolSchema[] = [];
  let warnings: SurfaceWarning[] = [];

  const warn = (server: string) => (message: string) => {
    log.warn({ server }, message);
    warnings.push({ at: Date.now(), server, message });
    if (warnings.length > MAX_WARNINGS) warnings = warnings.slice(-MAX_WARNINGS);
  };

  function rebind(): void {
    bound = bindTools(conns, manifest, opts.escalatePatterns);
    advertised = [
      ...bound.natural,
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
      const oauth = !isStdio(spec) && spec.auth === "oauth" ? opts.oauth : undefined;
      if (!isStdio(spec) && spec.auth === "oauth" && !oauth)
        throw new Error(`server "${alias}" is "auth": "oauth" but the surface has no OAuth connections`);
      if (spec.scope !== "user")
        return sharedServer(
          createServerConnection({
            ...connection,
            ...(oauth ? { authProvider: oauth.provider(DEPLOYMENT, alias) } : {}),
          }),
        );
      return perUserServer({
        ...connection,
        ...(oauth ? { authFor: (user: UserKey) => oauth.provider({ kind: "user", user }, alias) } : {}),
        usersDir: resolveValue(manifest.usersDir, env, alias, "usersDir"),
        idleMs: opts.userIdleMs ?? DEFAULT_USER_IDLE_MS,
        maxInstances: opts.userMaxProcesses ?? DEFAULT_USER_MAX_PROCESSES,
      });
    });
    rebind();
    await Promise.all(conns.map((c) => c.start()));
    rebind();
  }

  const { dispatch, dispatchPrivileged } = createToolDispatch(opts, (name) => bound.byName.get(name));

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
    escalateSchemas: () => bound.escalate,
    dispatchPrivileged,
    servers: () => conns.map((c) => c.info()),
    tools: () =>
      [...bound.byName.values()]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map(({ conn: _c, schema: _s, ...info }) => info),
    warnings: () => warnings,
    async reload(next?: Manifest) {
      await closeAll();
      if (next) manifest = next;
      warnings = [];
      await startAll();
    },
    listFor: async (user, unauthorized) => {
      await Promise.all(conns.filter((c) => !unauthorized.includes(c.alias)).map((c) => c.list(user)));
    },
    eraseUser: async (user) => {
      await Promise.all(conns.map((c) => c.erase(user)));
      // Their OAuth tokens too: revoked where the server supports it, then deleted.
      await opts.oauth?.eraseTokens(user);
    },
    close: closeAll,
  };
}
