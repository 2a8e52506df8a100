/**
 * The one logger (pino, JSON lines). Library code logs through `log` or a child of it, never
 * through console. Known secret values are redacted from every line before it is written.
 */
import { type Logger, pino } from "pino";

const secrets = new Set<string>();

/** Register values (tokens, keys, signing secrets) that must never appear in a log line. */
export function registerSecrets(values: readonly string[]): void {
  for (const v of values) if (v.length >= 6) secrets.add(v);
}

/** `text` with every registered secret replaced (for output that does not go through `log`). */
export function redact(text: string): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join("[redacted]");
  return out;
}

/** Where log lines go; tests swap it to capture output. */
let sink: (line: string) => void = (line) => process.stdout.write(line);

export function setLogSink(fn: (line: string) => void): void {
  sink = fn;
}

export const log: Logger = pino(
  {
    level: process.env.NEO_LOG_LEVEL ?? (process.env.VITEST ? "silent" : "info"),
    base: { app: "neo" },
    redact: {
      paths: ["*.token", "*.apiKey", "*.authorization", "*.headers.authorization"],
      censor: "[redacted]",
    },
  },
  { write: (line: string) => sink(redact(line)) },
);

export function setLogLevel(level: string): void {
  log.level = level;
}
