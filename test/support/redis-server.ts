/**
 * A test-owned `redis-server` on its own port (nothing kept on disk), for tests that kill and
 * restart Redis under a running bot without touching the shared server on 6379.
 */
import { type ChildProcess, spawn } from "node:child_process";

/**
 * `redis-server` arguments for a private server on `port`: no snapshots; an append-only file with
 * every write synced in `persistDir` when given (as compose runs it), else nothing on disk.
 */
export function redisServerArgs(port: number, persistDir?: string, password?: string): string[] {
  return [
    ...(password ? ["--requirepass", password] : []),
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    ...(persistDir
      ? ["--appendonly", "yes", "--appendfsync", "always", "--dir", persistDir]
      : ["--appendonly", "no"]),
  ];
}

/**
 * Start one on `port` (requiring `password` when given; with its data in `persistDir`'s append-only
 * file when given); resolves once it accepts connections.
 */
export async function startRedisServer(
  port: number,
  password?: string,
  persistDir?: string,
): Promise<ChildProcess> {
  const child = spawn("redis-server", redisServerArgs(port, persistDir, password));
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("Ready to accept connections")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
  });
  return child;
}

/** SIGKILL it (a crash, not a shutdown) and wait until it is gone. */
export async function killRedisServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await gone;
}
