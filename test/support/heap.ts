/**
 * Bytes a piece of work leaves reachable on the V8 heap, measured after full collections: how a test
 * shows that a long-lived structure does not grow with the number of distinct keys it was shown.
 * Tests compare it with what the same work would retain per key (megabytes apart), never with a
 * tight figure: a few hundred kilobytes of noise (compiled code, the test runner) are expected.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export function heapUsedAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Heap left reachable after `work` (run once beforehand, small, by the caller, to warm the code). */
export async function retainedBytes(work: () => unknown): Promise<number> {
  const before = heapUsedAfterGc();
  await work();
  return heapUsedAfterGc() - before;
}

export const MB = 1024 * 1024;
