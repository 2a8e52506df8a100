/**
 * Drives `test/fixtures/conversation-worker.ts` as a child process: submit messages over stdin,
 * read what the bot said from its out file, kill it (SIGKILL) or stop it (SIGTERM).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { InboundMessage, SubmitResult } from "../../src/core/conversations/types.js";

export interface Said {
  kind: "say" | "status" | "notice" | "queued";
  conversation: string;
  text: string;
  instanceId: string;
  pid: number;
  at: number;
}

export interface WorkerProcess {
  child: ChildProcessWithoutNullStreams;
  submit(message: InboundMessage): Promise<SubmitResult>;
  exited: Promise<number | null>;
  stderr(): string;
}

const WORKER = join(import.meta.dirname, "..", "fixtures", "conversation-worker.ts");

export async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER], {
    env: { ...process.env, NEO_LOG_LEVEL: "warn", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const waiting = new Map<string, Array<(r: SubmitResult) => void>>();
  let onReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (!line.startsWith("{")) return;
    const msg = JSON.parse(line) as {
      ready?: boolean;
      submitted?: string;
      result?: SubmitResult;
      error?: string;
    };
    if (msg.ready) onReady();
    if (msg.submitted !== undefined) {
      const list = waiting.get(msg.submitted) ?? [];
      const resolve = list.shift();
      if (msg.error) throw new Error(`worker submit failed: ${msg.error}`);
      resolve?.(msg.result!);
    }
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  await Promise.race([
    ready,
    exited.then((code) => {
      throw new Error(`worker exited (${code}) before ready:\n${err}`);
    }),
  ]);
  return {
    child,
    exited,
    stderr: () => err,
    submit(message) {
      return new Promise((resolve) => {
        waiting.set(message.id, [...(waiting.get(message.id) ?? []), resolve]);
        child.stdin.write(`${JSON.stringify(message)}\n`);
      });
    },
  };
}

export function readSaid(outFile: string): Said[] {
  if (!existsSync(outFile)) return [];
  return readFileSync(outFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Said);
}

/** Poll a condition (bounded); throws with `what` when it never holds. */
export async function until(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
