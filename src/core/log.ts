/**
 * The one logger (pino, JSON lines). Library code logs through `log` or a child of it, never
 * through console. Known secret values, and credentials in any URL, are redacted from every line
 * before it is written.
 */
import { type Logger, pino } from "pino";
import { redactUrls } from "../ops/redact.js";

const secrets = new Set<string>();

/** Register values (tokens, keys, signing secrets) that must never appear in a log line. */
export function registerSecrets(values: readonly string[]): void {
  for (const v of values) if (v.length >= 6) secrets.add(v);
}

/**
 * `text` with every registered secret, and the credentials of every URL, replaced (every log line
 * goes through it; use it too for output that does not go through `log`).
 */
export function redact(text: string): string {
  let out = redactUrls(text);
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join("[redacted]");
  return out;
}

/** Log calls waiting for `logSoon`'s batch. */
let soon: (() => void)[] = [];

function runSoon(): void {
  const batch = soon;
  soon = [];
  for (const write of batch) write();
}

/**
 * Make a log call (and the count that goes with it) off the latency path: after the I/O callback
 * that is running now, with the others queued meanwhile. For per-operation lines on hot paths (a
 * tool call's line and count cost ~10 µs of a ~250 µs call, bench/tools.bench.ts): the caller's next
 * request goes out first and the bookkeeping runs while it waits. Pending calls are made at exit.
 */
export function logSoon(write: () => void): void {
  if (soon.push(write) === 1) setImmediate(runSoon);
}

/**
 * Stdout, batched: lines go out together every 25 ms (or at 16 KiB), because a write per line cost
 * more than the rest of a tool call (bench/tools.bench.ts). What is pending is written on exit.
 */
function stdoutBatched(): (line: string) => void {
  let pending = "";
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending === "") return;
    const out = pending;
    pending = "";
    process.stdout.write(out);
  };
  // Stdout writes are synchronous on Linux and macOS, so this lands.
  process.once("exit", () => {
    runSoon();
    flush();
  });
  return (line) => {
    pending += line;
    if (pending.length >= 16_384) flush();
    else if (!timer) timer = setTimeout(flush, 25).unref();
  };
}

/** Where log lines go; tests swap it to capture output. */
let sink: (line: string) => void = stdoutBatched();

export function setLogSink(fn: (line: string) => void): void {
  sink = fn;
}

export const log: Logger = pino(
  {
    level: process.env.NEO_LOG_LEVEL ?? (process.env.VITEST ? "silent" : "info"),
    base: { app: "neo" },
    redact: {
      // Fixed paths only: wildcard paths cost ~12 µs a line. Configured secrets are caught by value
      // in `redact` whatever field they sit in; these catch credentials Neo was never told about.
      paths: [
        "token",
        "apiKey",
        "authorization",
        "headers.authorization",
        "err.headers.authorization",
        "err.config.headers.Authorization",
        "err.config.headers.authorization",
      ],
      censor: "[redacted]",
    },
  },
  { write: (line: string) => sink(redact(line)) },
);

export function setLogLevel(level: string): void {
  log.level = level;
}
