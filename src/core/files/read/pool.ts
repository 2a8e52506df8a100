/**
 * The file reader pool: at most `workers` worker threads (`NEO_FILE_WORKERS`), each reading one file
 * at a time; a file waits for a free one. A read is held to a wall time (`NEO_FILE_READ_MS`) and the
 * worker's heap to `NEO_FILE_READ_MB` (`resourceLimits`): a worker over either is terminated and the
 * file refused as too complex, and the next file gets a fresh worker. Workers are reused while
 * their heap stays low (the tokenizer and pdf.js load once per worker, not once per file), and end
 * after a minute idle.
 *
 * The worker is `worker.js` beside this module in dist/; run from the TypeScript sources (tsx,
 * vitest) it is `worker.ts`, loaded through tsx's loader registered inside the worker.
 */
import { Worker } from "node:worker_threads";
import { log } from "../../log.js";
import type { ReadJob, ReadKind, ReadResult, WorkerReply } from "./protocol.js";

export interface FileReaderOptions {
  workers: number;
  /** Wall time of one read. */
  timeoutMs: number;
  /** Heap of one worker (V8 old generation), in MB. */
  memoryMb: number;
}

export interface FileReader {
  /** Read one file in a worker. Rejects only when `signal` aborts (the worker is terminated). */
  read(job: ReadJob, signal?: AbortSignal): Promise<ReadResult>;
  /** End every worker (idle or busy); reads under way are refused. */
  close(): Promise<void>;
}

const IDLE_MS = 60_000;

const WHAT: Record<ReadKind, string> = { pdf: "this PDF", image: "this image", text: "this file" };

/** What the user is told when a worker is stopped over a limit. */
export function tooComplex(kind: ReadKind, limit: string): string {
  return `${WHAT[kind]} is too complex to read (it needed more than ${limit})`;
}

function spawn(memoryMb: number): Worker {
  const here = import.meta.url;
  const resourceLimits = { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };
  if (here.endsWith(".js")) return new Worker(new URL("./worker.js", here), { resourceLimits });
  const tsx = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./worker.ts", here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, execArgv: [], resourceLimits });
}

interface Slot {
  worker: Worker;
  idleTimer?: NodeJS.Timeout;
}

export function createFileReader(opts: FileReaderOptions): FileReader {
  const idle: Slot[] = [];
  const busy = new Set<Slot>();
  const waiting: Array<(slot: Slot) => void> = [];
  let closed = false;

  const retire = (slot: Slot) => {
    busy.delete(slot);
    const i = idle.indexOf(slot);
    if (i >= 0) idle.splice(i, 1);
    clearTimeout(slot.idleTimer);
    void slot.worker.terminate();
  };

  /** A worker for the next read: an idle one, a new one, or the next one freed. */
  const acquire = (): Promise<Slot> => {
    const ready = idle.pop();
    if (ready) {
      clearTimeout(ready.idleTimer);
      ready.worker.ref();
      busy.add(ready);
      return Promise.resolve(ready);
    }
    if (busy.size < opts.workers) {
      const slot: Slot = { worker: spawn(opts.memoryMb) };
      busy.add(slot);
      return Promise.resolve(slot);
    }
    return new Promise((resolve) => waiting.push(resolve));
  };

  /** The read is over: the worker goes to the next waiting read, or idles (or was retired). */
  const release = (slot: Slot, keep: boolean) => {
    if (!keep || closed) retire(slot);
    const next = waiting.shift();
    if (!next) {
      if (keep && !closed) {
        busy.delete(slot);
        slot.worker.unref();
        slot.idleTimer = setTimeout(() => retire(slot), IDLE_MS).unref();
        idle.push(slot);
      }
      return;
    }
    if (keep && !closed) return next(slot);
    const fresh: Slot = { worker: spawn(opts.memoryMb) };
    busy.add(fresh);
    next(fresh);
  };

  const read = async (job: ReadJob, signal?: AbortSignal): Promise<ReadResult> => {
    if (closed) return { ok: false, why: "files are not read while Neo shuts down" };
    signal?.throwIfAborted();
    const slot = await acquire();
    const { worker } = slot;
    return new Promise<ReadResult>((resolve, reject) => {
      let settled = false;
      const finish = (keep: boolean, result?: ReadResult, err?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        release(slot, keep);
        if (result) resolve(result);
        else reject(err);
      };
      const onMessage = (reply: WorkerReply) => {
        // A worker holding half its heap after a read is replaced rather than reused.
        finish(reply.heapUsed < (opts.memoryMb * 1024 * 1024) / 2, reply.result);
      };
      const onError = (err: Error & { code?: string }) => {
        const oom = err.code === "ERR_WORKER_OUT_OF_MEMORY";
        if (!oom) log.warn({ err: err.message, kind: job.kind }, "file reader worker failed");
        finish(false, { ok: false, why: tooComplex(job.kind, `${opts.memoryMb} MB of memory`) });
      };
      const onExit = () =>
        finish(false, { ok: false, why: tooComplex(job.kind, `${opts.memoryMb} MB of memory`) });
      const onAbort = () => finish(false, undefined, signal?.reason);
      const timer = setTimeout(
        () => finish(false, { ok: false, why: tooComplex(job.kind, `${opts.timeoutMs / 1000} s`) }),
        opts.timeoutMs,
      );
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.on("exit", onExit);
      signal?.addEventListener("abort", onAbort, { once: true });
      // A copy the worker owns: the download's buffer may share its memory with other buffers.
      const bytes = new Uint8Array(job.bytes);
      worker.postMessage({ ...job, bytes }, [bytes.buffer]);
    });
  };

  return {
    read,
    async close() {
      closed = true;
      await Promise.all([...idle, ...busy].map((s) => s.worker.terminate()));
      idle.length = 0;
      busy.clear();
    },
  };
}
