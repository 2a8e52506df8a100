/**
 * Child processes and temp dirs the system suite owns, and the guarantee that every one of them is
 * gone when the suite exits — normally, on a thrown error, or on SIGINT/SIGTERM. Children are
 * spawned in their own process group so killing one also kills what it spawned (the bot's stdio
 * MCP servers), and only groups we started are ever signalled.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { redisServerArgs } from "../../test/support/redis-server.js";

export interface Owned {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Everything it wrote to stdout/stderr, capped at the last 64 KiB. */
  output(): string;
  exited: Promise<number | null>;
  alive(): boolean;
}

const children = new Set<Owned>();
const dirs = new Set<string>();

/** The repository root: where the bot under test runs from. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The REAL bot process (`node --import tsx src/main.ts`), configured only by `env`; `nodeArgs`
 * go before the entry (e.g. --cpu-prof).
 */
export function startNeo(name: string, env: Record<string, string>, nodeArgs: string[] = []): Owned {
  return start(name, process.execPath, [...nodeArgs, "--import", "tsx", "src/main.ts"], env, ROOT);
}

/**
 * A bench entry point: cleanup hooks installed, `main` run, everything owned killed and removed,
 * and the process ended with `main`'s exit code (1 on a throw).
 */
export function runBenchMain(tag: string, main: () => Promise<number>): void {
  installCleanup(tag);
  main().then(
    (code) => {
      cleanupNow();
      process.exit(code);
    },
    (e: unknown) => {
      process.stderr.write(`${tag}: failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      cleanupNow();
      process.exit(1);
    },
  );
}

export class BenchProcessError extends Error {
  readonly code = "BENCH_PROCESS";
}

/** A temp dir removed at exit. */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `neo-bench-${prefix}-`));
  dirs.add(d);
  return d;
}

/** Spawn `cmd args` in its own process group, output captured, killed at exit. */
export function start(
  name: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd = process.cwd(),
): Owned {
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  if (child.pid === undefined) throw new BenchProcessError(`${name}: spawn failed`);
  let out = "";
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-65_536);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let running = true;
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running = false;
      resolve(code);
    }),
  );
  const owned: Owned = { name, child, pid: child.pid, output: () => out, exited, alive: () => running };
  children.add(owned);
  void exited.then(() => children.delete(owned));
  return owned;
}

/** SIGKILL the child's whole process group and wait for the child to exit. */
export async function kill(p: Owned): Promise<void> {
  if (!p.alive()) return;
  try {
    process.kill(-p.pid, "SIGKILL");
  } catch {
    // Already gone between the check and the signal.
  }
  await p.exited;
}

/** Pids of the processes whose parent is `ppid` and whose command line contains `needle`. */
export function childPids(ppid: number, needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent !== ppid) continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmd.includes(needle)) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Peak resident set size (VmHWM) of a live process, in bytes. */
export function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** `n` TCP ports in a row nothing listens on right now; returns the first. */
export async function freePortRun(n: number): Promise<number> {
  const isFree = (port: number) =>
    new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once("error", () => resolve(false));
      s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
    });
  for (;;) {
    const first = await freePort();
    let ok = first + n - 1 <= 65_535;
    for (let p = first + 1; ok && p < first + n; p++) ok = await isFree(p);
    if (ok) return first;
  }
}

/** Poll `cond` until it holds; throws naming `what` after `timeoutMs`. */
export async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline)
      throw new BenchProcessError(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Kill every owned child (by group) and remove every temp dir. Safe to call more than once. */
export function cleanupNow(): void {
  for (const p of children) {
    try {
      process.kill(-p.pid, "SIGKILL");
    } catch {
      // Already exited.
    }
  }
  children.clear();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

/** Install the exit hooks once: cleanup runs on exit, on signals and on an uncaught failure. */
function installCleanup(tag: string): void {
  process.once("exit", cleanupNow);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(sig, () => {
      process.stderr.write(`${tag}: ${sig}, cleaning up\n`);
      cleanupNow();
      process.exit(130);
    });
  }
}

/**
 * A redis-server owned by the suite on its own port. Without `persistDir` nothing is persisted (a
 * kill loses everything); with it, an append-only file fsynced on every write (a kill loses nothing).
 */
export interface BenchRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  kill(): Promise<void>;
  proc(): Owned | null;
}

export async function benchRedis(persistDir?: string): Promise<BenchRedis> {
  const port = await freePort();
  let p: Owned | null = null;
  const ping = async (): Promise<boolean> => {
    const { createConnection } = await import("node:net");
    return new Promise((resolve) => {
      const sock = createConnection({ port, host: "127.0.0.1" }, () => sock.write("PING\r\n"));
      sock.once("data", (d) => {
        sock.destroy();
        resolve(d.toString().startsWith("+PONG"));
      });
      sock.once("error", () => resolve(false));
    });
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    proc: () => p,
    async start() {
      p = start("redis", "redis-server", redisServerArgs(port, persistDir));
      await until(`redis-server on ${port}`, ping, 10_000);
    },
    async kill() {
      if (p) await kill(p);
      p = null;
    },
  };
}

/**
 * CPU time (user + system) a live process has used so far, in ms: all its threads (`/proc/<pid>/stat`),
 * or one of them (`/proc/<pid>/task/<tid>/stat`; the main thread's tid is the pid).
 */
export function cpuMs(pid: number, tid?: number): number {
  const stat = readFileSync(
    tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`,
    "utf8",
  );
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
