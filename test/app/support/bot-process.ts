/**
 * The real bot as a child process (`node --import tsx src/main.ts`), its stdout and stderr
 * captured whole, with helpers to wait for a log line and to stop it with a signal.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

export { freePort } from "../../support/free-port.js";

export interface BotProcess {
  child: ChildProcessWithoutNullStreams;
  /** Everything printed so far, both streams. */
  output(): string;
  /** Parsed JSON log lines printed so far (stdout). */
  logLines(): Array<Record<string, unknown>>;
  /** Resolves once a log line satisfies `pred`; rejects if the process exits first or on timeout. */
  waitForLog(
    pred: (line: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<void>;
  exit: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

export function startBot(env: Record<string, string>): BotProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    // Only what is given: nothing leaks in from the test environment. /metrics on a free port
    // unless a test names one (its default, NEO_HTTP_PORT + 6464, may be another test's).
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      NEO_ENV_FILE: "off",
      NEO_METRICS_PORT: "0",
      ...env,
    },
    cwd: process.cwd(),
  });
  let stdout = "";
  let stderr = "";
  const waiters: Array<() => void> = [];
  const poke = () => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    poke();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    poke();
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let exited = false;
  void exit.then(() => {
    exited = true;
    poke();
  });
  const logLines = () =>
    stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    child,
    output: () => stdout + stderr,
    logLines,
    exit,
    kill: (signal) => child.kill(signal),
    waitForLog: (pred, what, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${what}; output:\n${stdout}${stderr}`)),
          timeoutMs,
        );
        const check = () => {
          if (logLines().some(pred)) {
            clearTimeout(timer);
            resolve();
          } else if (exited) {
            clearTimeout(timer);
            reject(new Error(`bot exited before ${what}; output:\n${stdout}${stderr}`));
          } else waiters.push(check);
        };
        check();
      }),
  };
}
