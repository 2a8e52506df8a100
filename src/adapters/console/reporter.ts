/**
 * The console Reporter (seed: stdoutReporter): Say → stdout, Status and Notice → stderr.
 */
import type { Writable } from "node:stream";
import type { Reporter } from "../../core/reporter.js";

export function createConsoleReporter(out: Writable, err: Writable): Reporter {
  return {
    say: async (text) => {
      out.write(`${text}\n`);
    },
    status: async (text) => {
      err.write(`${text}\n`);
    },
    notice: async (text) => {
      err.write(`${text}\n`);
    },
  };
}
