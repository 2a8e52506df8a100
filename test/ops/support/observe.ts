/**
 * Reading what operators see: counter values from the Prometheus text of the one registry, and
 * the JSON log lines captured through the log sink.
 */
import { setLogLevel, setLogSink } from "../../../src/core/log.js";
import { registry } from "../../../src/ops/metrics.js";

export type Labels = Record<string, string>;

/** `name{labels}`'s value in the Prometheus text (0 when the series does not exist yet). */
export function valueIn(text: string, name: string, labels: Labels = {}): number {
  const want = Object.entries(labels);
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
    if (have.size === want.length && want.every(([k, v]) => have.get(k) === v)) return Number(m[3]);
  }
  return 0;
}

export interface MetricsSnapshot {
  text: string;
  get(name: string, labels?: Labels): number;
}

export async function snapshot(): Promise<MetricsSnapshot> {
  const text = await registry.metrics();
  return { text, get: (name, labels) => valueIn(text, name, labels) };
}

/** How much each series moved between two snapshots. */
export function delta(before: MetricsSnapshot, after: MetricsSnapshot) {
  return (name: string, labels: Labels = {}): number => after.get(name, labels) - before.get(name, labels);
}

export type LogLine = Record<string, unknown> & { msg: string; level: number };

export interface LogCapture {
  lines: LogLine[];
  /** Raw text as written (for secret greps). */
  raw(): string;
  /** Info lines (level 30) with this message. */
  info(msg: string): LogLine[];
  stop(): void;
}

/** Capture every log line at info and above until `stop()`. */
export function captureLogs(level: "info" | "debug" = "info"): LogCapture {
  const raw: string[] = [];
  const lines: LogLine[] = [];
  setLogSink((line) => {
    raw.push(line);
    for (const l of line.split("\n")) if (l.trim()) lines.push(JSON.parse(l) as LogLine);
  });
  setLogLevel(level);
  return {
    lines,
    raw: () => raw.join(""),
    info: (msg) => lines.filter((l) => l.level === 30 && l.msg === msg),
    stop: () => {
      setLogLevel("silent");
      setLogSink(() => {});
    },
  };
}
