/**
 * The embedded store's durability: an append-only JSON-lines op log, replayed on open and
 * rewritten (write temp + rename, so never half-written) when it has grown well past the live data.
 * Each op is one `write` of one whole line to an O_APPEND descriptor, done before the operation
 * resolves: a killed process keeps every op that resolved, and a torn last line (killed mid-write)
 * is cut off on the next open instead of corrupting what follows.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

/** One logged mutation. Values are kept in their encoded (JSON text) form. */
export type LogOp =
  | { o: "set"; k: string; v: string; e?: number }
  | { o: "del"; k: string }
  | { o: "exp"; k: string; e: number }
  | { o: "push"; k: string; v: string[] }
  /** Drop the first `n` items of a list (retention of an append-only log). */
  | { o: "trim"; k: string; n: number };

export class StoreLockedError extends Error {
  readonly code = "STORE_LOCKED";
}

export class StoreCorruptError extends Error {
  readonly code = "STORE_CORRUPT";
}

export interface OpLog {
  readonly path: string;
  write(op: LogOp): void;
  /** Replace the whole log with `ops` (the live state), atomically. */
  rewrite(ops: Iterable<LogOp>): void;
  /** Lines written since the last rewrite (or in the file at open). */
  readonly lines: number;
  close(): void;
}

/** Log paths open in this process: two stores over one log would interleave and corrupt it. */
const openHere = new Set<string>();

export function openOpLog(dir: string, name: string, replay: (op: LogOp) => void): OpLog {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.log`);
  const lockPath = `${path}.lock`;
  if (openHere.has(path)) throw new StoreLockedError(`store log ${path} is already open in this process`);
  takeLock(lockPath);
  openHere.add(path);

  let lines = 0;
  if (existsSync(path)) {
    const text = readFileSync(path, "utf8");
    const end = text.lastIndexOf("\n") + 1;
    // A torn final line (process killed mid-write) never resolved to its caller: drop it.
    if (end < text.length) truncateSync(path, Buffer.byteLength(text.slice(0, end)));
    for (const line of text.slice(0, end).split("\n")) {
      if (line === "") continue;
      lines++;
      let op: LogOp;
      try {
        op = JSON.parse(line) as LogOp;
      } catch (err) {
        releaseLock(lockPath);
        openHere.delete(path);
        throw new StoreCorruptError(
          `store log ${path} line ${lines} is not valid JSON; fix or move the file`,
          {
            cause: err,
          },
        );
      }
      replay(op);
    }
  }
  let fd = openSync(path, "a");

  return {
    path,
    get lines() {
      return lines;
    },
    write(op) {
      writeSync(fd, `${JSON.stringify(op)}\n`);
      lines++;
    },
    rewrite(ops) {
      const tmp = `${path}.tmp`;
      let text = "";
      let count = 0;
      for (const op of ops) {
        text += `${JSON.stringify(op)}\n`;
        count++;
      }
      writeFileSync(tmp, text);
      closeSync(fd);
      renameSync(tmp, path);
      fd = openSync(path, "a");
      lines = count;
    },
    close() {
      closeSync(fd);
      openHere.delete(path);
      releaseLock(lockPath);
    },
  };
}

/** One process per data dir: a lock file holding the owner's pid; a dead owner's lock is stale. */
function takeLock(lockPath: string): void {
  if (existsSync(lockPath)) {
    const pid = Number(readFileSync(lockPath, "utf8").trim());
    if (pid !== process.pid && pidAlive(pid)) {
      throw new StoreLockedError(
        `data dir is in use by process ${pid} (${lockPath}); stop it or point NEO_DATA_DIR elsewhere`,
      );
    }
  }
  writeFileSync(lockPath, String(process.pid));
}

function releaseLock(lockPath: string): void {
  try {
    if (Number(readFileSync(lockPath, "utf8").trim()) === process.pid) unlinkSync(lockPath);
  } catch {
    // Already gone: nothing to release.
  }
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
