/**
 * A manifest server as the surface dispatches to it: one process for everyone (`scope: shared`), or
 * one process per user (`scope: user`). A per-user server's tools are listed once at start by a
 * probe process on a throwaway folder (then stopped); each user's process is spawned on their first
 * call with `${NEO_USER_DIR}` resolved to their own folder, and stopped after `idleMs` without a
 * call. Calls are routed by the requester's user key, so one user's tool state is never another's.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { cortexOwner, type UserKey } from "../keys.js";
import { USER_DIR_VAR } from "./manifest.js";
import {
  createServerConnection,
  type ServerConnection,
  type ServerConnectionOptions,
  type ServerInfo,
} from "./server-connection.js";
import { ToolTransportError } from "./types.js";

/** Default idle time before a user's server process is stopped (`NEO_TOOL_USER_IDLE_MS`). */
export const DEFAULT_USER_IDLE_MS = 600_000;

export interface ToolServer {
  readonly alias: string;
  /** Start (shared) or list the tools with a probe (per user). Never rejects. */
  start(): Promise<void>;
  tools(): readonly Tool[];
  /** Call a tool for `user`: a per-user server runs it in that user's own process. */
  call(
    user: UserKey,
    tool: string,
    args: Record<string, unknown>,
    label: string,
    signal?: AbortSignal,
  ): Promise<CallToolResult>;
  info(): ServerInfo;
  close(): Promise<void>;
}

/** One process for all users. */
export function sharedServer(conn: ServerConnection): ToolServer {
  return {
    alias: conn.alias,
    start: () => conn.start(),
    tools: () => conn.tools(),
    call: (_user, tool, args, label, signal) => conn.call(tool, args, label, signal),
    info: () => conn.info(),
    close: () => conn.close(),
  };
}

/**
 * A user's folder name: readable, file-system safe, and distinct for distinct keys (the hash keeps
 * `a:b` and `a_b` apart). A Discord person has one folder across guilds and DMs, as one cortex.
 */
export function userFolderName(user: UserKey): string {
  const owner = cortexOwner(user);
  const readable = owner.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80);
  const hash = createHash("sha256").update(owner).digest("hex").slice(0, 12);
  return `${readable}-${hash}`;
}

export interface PerUserServerOptions extends ServerConnectionOptions {
  /** The folder per-user folders are made in (resolved). */
  usersDir: string;
  idleMs: number;
}

interface Instance {
  conn: ServerConnection;
  inFlight: number;
  idle?: NodeJS.Timeout;
}

export function perUserServer(opts: PerUserServerOptions): ToolServer {
  const { alias } = opts;
  const instances = new Map<UserKey, Instance>();
  let tools: readonly Tool[] = [];
  let probed: ServerInfo = { alias, transport: "stdio", status: "starting", toolCount: 0, restarts: 0 };
  let closed = false;

  const connectionFor = (env: Record<string, string | undefined>, onWarning: (m: string) => void) =>
    createServerConnection({ ...opts, env, onToolsChanged: () => {}, onWarning });

  /** Lists the tools on a throwaway folder, so the model sees them before anyone has called one. */
  async function start(): Promise<void> {
    if (opts.spec.disabled) {
      probed = { ...probed, status: "disabled" };
      return;
    }
    const dir = await mkdtemp(join(tmpdir(), "neo-tools-probe-"));
    const probe = connectionFor({ ...opts.env, [USER_DIR_VAR]: dir }, opts.onWarning);
    try {
      await probe.start();
      tools = probe.tools();
      probed = { ...probe.info(), toolCount: tools.length };
    } finally {
      await probe.close();
      await rm(dir, { recursive: true, force: true });
    }
    opts.onToolsChanged();
  }

  function stop(owner: UserKey, inst: Instance): void {
    if (instances.get(owner) !== inst) return;
    instances.delete(owner);
    void inst.conn.close();
  }

  /** The user's instance; a new one when they have none, or theirs failed (a fresh start retries). */
  function instanceOf(owner: UserKey): Instance {
    const held = instances.get(owner);
    const status = held?.conn.info().status;
    if (held && status !== "failed" && status !== "closed") return held;
    if (held) stop(owner, held);
    const env = { ...opts.env, [USER_DIR_VAR]: resolve(opts.usersDir, userFolderName(owner)) };
    // Warnings name the server only: user keys stay out of status and logs.
    const conn = connectionFor(env, (m) => opts.onWarning(`${m} (one user's instance)`));
    const inst: Instance = { conn, inFlight: 0 };
    instances.set(owner, inst);
    // Not awaited: the call waits for the start it shares with concurrent calls.
    void conn.start();
    return inst;
  }

  async function call(
    user: UserKey,
    tool: string,
    args: Record<string, unknown>,
    label: string,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    if (closed) throw new ToolTransportError(`server "${alias}" is closed`, label);
    const owner = cortexOwner(user);
    const inst = instanceOf(owner);
    clearTimeout(inst.idle);
    inst.inFlight += 1;
    try {
      return await inst.conn.call(tool, args, label, signal);
    } finally {
      inst.inFlight -= 1;
      if (inst.inFlight === 0) {
        inst.idle = setTimeout(() => stop(owner, inst), opts.idleMs);
        // An idle timer never keeps the process alive.
        inst.idle.unref();
      }
    }
  }

  return {
    alias,
    start,
    tools: () => tools,
    call,
    info: () => ({ ...probed, scope: "user", instances: instances.size }),
    async close() {
      closed = true;
      const all = [...instances.values()];
      instances.clear();
      for (const inst of all) clearTimeout(inst.idle);
      await Promise.all(all.map((i) => i.conn.close()));
    },
  };
}
