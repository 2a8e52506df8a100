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
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { cortexOwner, type UserKey } from "../keys.js";
import { USER_DIR_VAR } from "./manifest.js";
import type { CallOptions } from "./server-calls.js";
import {
  createServerConnection,
  type ServerConnection,
  type ServerConnectionOptions,
  type ServerInfo,
} from "./server-connection.js";
import { ToolTransportError } from "./types.js";

/** Default idle time before a user's server process is stopped (`NEO_TOOL_USER_IDLE_MS`). */
export const DEFAULT_USER_IDLE_MS = 600_000;
/** Default most users' processes of one per-user server running at once (`NEO_TOOL_USER_MAX_PROCESSES`). */
export const DEFAULT_USER_MAX_PROCESSES = 32;

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
    options?: CallOptions,
  ): Promise<CallToolResult>;
  /**
   * A per-person OAuth server not listed yet (no one's tokens serve a probe): start `user`'s
   * connection, which lists the tools for everyone. Nothing once listed, or for other servers.
   */
  list(user: UserKey): Promise<void>;
  info(): ServerInfo;
  /** An erasure: stop `user`'s own process and delete their folder. Nothing for a shared server. */
  erase(user: UserKey): Promise<void>;
  close(): Promise<void>;
}

/** One process for all users. */
export function sharedServer(conn: ServerConnection): ToolServer {
  return {
    alias: conn.alias,
    start: () => conn.start(),
    tools: () => conn.tools(),
    call: (_user, tool, args, label, options) => conn.call(tool, args, label, options),
    list: async () => {},
    info: () => conn.info(),
    erase: async () => {},
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
  /**
   * Most users' processes running at once. A new user's call stops the least recently used idle
   * one; when every one is busy it waits, in order, for one to finish (a workspace of thousands
   * must not become thousands of processes).
   */
  maxInstances: number;
  /**
   * An `"auth": "oauth"` server's credentials for one person (a url server with `"scope": "user"`):
   * each person's connection carries their own tokens. Its tools are listed by the first person's
   * connection that starts, as no one's tokens serve a probe.
   */
  authFor?: (user: UserKey) => OAuthClientProvider;
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

  const connectionFor = (
    env: Record<string, string | undefined>,
    onWarning: (m: string) => void,
    owner?: UserKey,
  ) =>
    createServerConnection({
      ...opts,
      env,
      onToolsChanged: () => {
        // An OAuth server has no probe: the first person's connection lists the tools.
        if (!opts.authFor || !owner) return;
        const listed = instances.get(owner)?.conn.tools();
        if (listed?.length && tools.length === 0) {
          tools = listed;
          probed = { ...probed, status: "ready", toolCount: tools.length };
          opts.onToolsChanged();
        }
      },
      onWarning,
      ...(opts.authFor && owner ? { authProvider: opts.authFor(owner) } : {}),
    });

  /** Lists the tools on a throwaway folder, so the model sees them before anyone has called one. */
  async function start(): Promise<void> {
    if (opts.spec.disabled) {
      probed = { ...probed, status: "disabled" };
      return;
    }
    if (opts.authFor) {
      probed = { ...probed, transport: "http", error: "lists its tools once a person has signed in" };
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

  /** Calls of users without a process, waiting for room, in arrival order. */
  const waiting: { owner: UserKey; wake: () => void }[] = [];

  function stop(owner: UserKey, inst: Instance): void {
    if (instances.get(owner) !== inst) return;
    clearTimeout(inst.idle);
    instances.delete(owner);
    void inst.conn.close();
  }

  /** Room for one more process: below the cap, or the least recently used idle process stopped. */
  function makeRoom(): boolean {
    if (instances.size < opts.maxInstances) return true;
    // Map order is use order: `reserve` re-inserts the user it serves.
    for (const [owner, inst] of instances) {
      if (inst.inFlight > 0) continue;
      stop(owner, inst);
      return true;
    }
    return false;
  }

  /** Wait until a process goes idle (or stops), or the call is cancelled; `first`: at the front. */
  function vacancy(owner: UserKey, label: string, first: boolean, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry = {
        owner,
        wake: () => {
          signal?.removeEventListener("abort", cancel);
          resolve();
        },
      };
      const cancel = () => {
        const at = waiting.indexOf(entry);
        if (at >= 0) waiting.splice(at, 1);
        reject(new ToolTransportError(`${label} failed: cancelled`, label));
      };
      if (signal?.aborted) return cancel();
      signal?.addEventListener("abort", cancel, { once: true });
      if (first) waiting.unshift(entry);
      else waiting.push(entry);
    });
  }

  function spawn(owner: UserKey): Instance {
    const env = { ...opts.env, [USER_DIR_VAR]: resolve(opts.usersDir, userFolderName(owner)) };
    // Warnings name the server only: user keys stay out of status and logs.
    const conn = connectionFor(env, (m) => opts.onWarning(`${m} (one user's instance)`), owner);
    // Not awaited: the call waits for the start it shares with concurrent calls.
    void conn.start();
    return { conn, inFlight: 0 };
  }

  /**
   * The user's instance, reserved for one call (in flight, idle timer cleared): theirs while it
   * lives; a new one in place of theirs when it failed (a fresh start retries); else a new one once
   * there is room, after the calls that were already waiting for room.
   */
  async function reserve(owner: UserKey, label: string, signal?: AbortSignal): Promise<Instance> {
    let woken = false;
    for (;;) {
      if (closed) throw new ToolTransportError(`server "${alias}" is closed`, label);
      const held = instances.get(owner);
      const status = held?.conn.info().status;
      let inst: Instance | undefined;
      if (held && status !== "failed" && status !== "closed") inst = held;
      else if (held) {
        stop(owner, held);
        inst = spawn(owner);
      } else if ((woken || waiting.length === 0) && makeRoom()) inst = spawn(owner);
      if (inst) {
        instances.delete(owner);
        instances.set(owner, inst);
        clearTimeout(inst.idle);
        inst.inFlight += 1;
        // The user's other calls waiting for room now have their process.
        for (const w of waiting.filter((w) => w.owner === owner)) {
          waiting.splice(waiting.indexOf(w), 1);
          w.wake();
        }
        // Room left over (below the cap while several waited) goes to the next in line.
        if (woken && instances.size < opts.maxInstances) waiting.shift()?.wake();
        return inst;
      }
      // A woken call that found the room taken (a call that came in between) keeps its place at the front.
      await vacancy(owner, label, woken, signal);
      woken = true;
    }
  }

  async function call(
    user: UserKey,
    tool: string,
    args: Record<string, unknown>,
    label: string,
    options?: CallOptions,
  ): Promise<CallToolResult> {
    if (closed) throw new ToolTransportError(`server "${alias}" is closed`, label);
    const owner = cortexOwner(user);
    const inst = await reserve(owner, label, options?.signal);
    try {
      return await inst.conn.call(tool, args, label, options);
    } finally {
      release(owner, inst);
    }
  }

  function release(owner: UserKey, inst: Instance): void {
    inst.inFlight -= 1;
    if (inst.inFlight === 0) {
      inst.idle = setTimeout(() => stop(owner, inst), opts.idleMs);
      // An idle timer never keeps the process alive.
      inst.idle.unref();
      waiting.shift()?.wake();
    }
  }

  async function list(user: UserKey): Promise<void> {
    if (!opts.authFor || tools.length > 0 || closed) return;
    const owner = cortexOwner(user);
    const inst = await reserve(owner, `${alias} (tools/list)`);
    try {
      await inst.conn.start();
    } finally {
      release(owner, inst);
    }
  }

  return {
    alias,
    start,
    tools: () => tools,
    call,
    list,
    info: () => ({ ...probed, scope: "user", instances: instances.size, waiting: waiting.length }),
    async erase(user) {
      const owner = cortexOwner(user);
      const inst = instances.get(owner);
      if (inst) {
        clearTimeout(inst.idle);
        instances.delete(owner);
        // Exited before its folder goes, so it cannot write there again.
        await inst.conn.close();
        waiting.shift()?.wake();
      }
      await rm(resolve(opts.usersDir, userFolderName(owner)), { recursive: true, force: true });
    },
    async close() {
      closed = true;
      const all = [...instances.values()];
      instances.clear();
      for (const inst of all) clearTimeout(inst.idle);
      for (const w of waiting.splice(0)) w.wake();
      await Promise.all(all.map((i) => i.conn.close()));
    },
  };
}
