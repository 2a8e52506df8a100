/**
 * A crash right after a write: run a writer fixture (test/memory/fixtures) until it prints
 * "written", then SIGKILL it and wait for it to be gone.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";

export async function killAfterWrite(fixture: string, args: string[]): Promise<void> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "../fixtures", fixture), ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let err = "";
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      if (d.toString().includes("written")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`writer exited (${code}) before writing: ${err}`)));
  });
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}
