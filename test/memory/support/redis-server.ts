/**
 * A test-owned redis-server child process (no persistence) that a test can kill and restart, to
 * exercise the store's behaviour while Redis is down and after it returns.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { freePort } from "../../support/free-port.js";

export interface OwnedRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  /** SIGKILL, resolved once the process has exited. */
  kill(): Promise<void>;
}

export async function ownedRedis(): Promise<OwnedRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const proc = spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "no"], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = proc;
      await new Promise<void>((resolve, reject) => {
        let out = "";
        proc.stdout?.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes("Ready to accept connections")) resolve();
        });
        proc.once("exit", (code) => reject(new Error(`redis-server exited early (${code}): ${out}`)));
        proc.once("error", reject);
      });
    },
    async kill() {
      const proc = child;
      if (!proc || proc.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
      proc.kill("SIGKILL");
      await exited;
      child = undefined;
    },
  };
}

/** Poll `cond` until true, at most `tries` times, yielding to the event loop between tries. */
export async function until(cond: () => boolean | Promise<boolean>, tries = 400, stepMs = 25): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error("condition not reached in time");
}
