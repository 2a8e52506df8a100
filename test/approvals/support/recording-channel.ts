/**
 * An ApprovalChannel for tests: records what was presented and every re-render, and lets the test
 * wait for the presentation instead of sleeping. A real implementation of the port, not a mock.
 */
import type { ApprovalChannel, ApprovalRecord } from "../../../src/core/approvals/types.js";

export interface RecordingChannel extends ApprovalChannel {
  presented: ApprovalRecord[];
  updates: ApprovalRecord[];
  /** Resolves with the n-th presented record (1-based). */
  nextPresented(n?: number): Promise<ApprovalRecord>;
}

export function recordingChannel(onPresent?: (rec: ApprovalRecord) => void): RecordingChannel {
  const presented: ApprovalRecord[] = [];
  const waiters: Array<{ n: number; resolve: (r: ApprovalRecord) => void }> = [];
  return {
    presented,
    updates: [],
    async present(rec) {
      presented.push(rec);
      for (const w of waiters.filter((w) => w.n <= presented.length)) w.resolve(presented[w.n - 1]!);
      onPresent?.(rec);
      return `msg-${presented.length}`;
    },
    async update(rec) {
      this.updates.push(rec);
    },
    nextPresented(n = 1) {
      const have = presented[n - 1];
      if (have) return Promise.resolve(have);
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
}
