/**
 * Storage that stays flat (issue 32): 20,000 messages over 2,000 threads on a clock that runs ten
 * retention horizons, written as the conversations layer writes them (the real journal: each
 * message journaled, then its turn logged: turn-start, the user message, the answer, turn-end),
 * into the embedded file store with its clock injected. The model, the agent loop and the platforms
 * are left out: they do not change what is stored per message, and a fake clock is what makes ten
 * horizons fit in seconds. Store size is the op log's bytes on disk and its live keys.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJournal } from "../src/core/conversations/journal.js";
import type { LogEntry } from "../src/core/conversations/log-entry.js";
import type { InboundMessage } from "../src/core/conversations/types.js";
import { createFileStore } from "../src/store/file-store.js";
import type { BenchSection } from "./types.js";

const MESSAGES = 20_000;
const THREADS = 2_000;
const DAY = 86_400_000;
/** The horizon; the clock runs 10 of them over the run. */
const RETENTION_MS = DAY;
const STEP_MS = (10 * RETENTION_MS) / MESSAGES;
const CHECKPOINTS = 10;

export async function run(): Promise<BenchSection> {
  const dir = mkdtempSync(join(tmpdir(), "neo-storage-bench-"));
  let now = Date.UTC(2026, 0, 1);
  const store = await createFileStore({ dataDir: dir, prefix: "neo:", now: () => now });
  const journal = createJournal(store, 3_600_000, RETENTION_MS);
  // Each thread gets its 10 messages in a row, one after another: 200 threads speak in any horizon.
  const perThread = MESSAGES / THREADS;
  const lastSeen = new Map<string, number>();
  const logLength = new Map<string, number>();
  const rows: string[] = [];
  try {
    for (let i = 0; i < MESSAGES; i++) {
      const c = `slack:T1:C${Math.floor(i / perThread) % 50}:17000${Math.floor(i / perThread)}.000100`;
      const text = `message ${i}: the rollout of region ${i % 7} waits on the canary, error rate ${(i % 5) / 10} %`;
      const m: InboundMessage = {
        id: `ev-${i}`,
        conversation: c,
        speaker: { userKey: `slack:T1:U${i % 40}`, displayName: `user ${i % 40}` },
        text,
        shared: true,
        place: { kind: "public", workspace: "T1" },
        position: `17000${i}.000100`,
        receivedAt: now,
      };
      await journal.record(m, true);
      // A thread silent past the horizon was deleted: its log starts again from nothing.
      const seen = lastSeen.get(c);
      if (seen === undefined || now - seen >= RETENTION_MS) logLength.set(c, 0);
      const entries: LogEntry[] = [
        { type: "turn-start", from: 0, id: m.id, at: now },
        { type: "message", message: { role: "user", content: text }, at: now },
        { type: "message", message: { role: "assistant", content: `Noted: ${text.slice(0, 40)}.` }, at: now },
        { type: "turn-end", status: "completed", at: now },
      ] as LogEntry[];
      const length = await journal.appendLog(c, entries, logLength.get(c) ?? 0);
      logLength.set(c, length);
      await journal.clearPending(c, Number.MAX_SAFE_INTEGER);
      lastSeen.set(c, now);
      now += STEP_MS;
      if ((i + 1) % (MESSAGES / CHECKPOINTS) === 0) {
        const active = [...lastSeen.values()].filter((t) => now - t < RETENTION_MS).length;
        const size = await store.size();
        rows.push(
          `| ${(i + 1).toLocaleString("en-US")} | ${(((i + 1) * STEP_MS) / RETENTION_MS).toFixed(0)} | ${lastSeen.size} | ${active} | ${size.keys.toLocaleString("en-US")} | ${(size.bytes / 1024).toFixed(0)} | ${(size.bytes / Math.max(1, active) / 1024).toFixed(1)} |`,
        );
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: "Storage over time: retention keeps the store flat",
    markdown: `${MESSAGES.toLocaleString("en-US")} messages over ${THREADS.toLocaleString("en-US")} threads (${perThread} each, in a row) on a clock that runs ten retention horizons (\`NEO_CONVERSATION_RETENTION_DAYS=1\`, one message every ${(STEP_MS / 1000).toFixed(1)} s of store time). Driven through the real journal (each message journaled, its turn logged: turn-start, user message, answer, turn-end) into the embedded file store with an injected clock; the model, loop and platforms are left out (they do not change what is stored per message) so ten horizons fit in seconds. Size is the op log on disk (it is rewritten when it holds dead lines, at least hourly on the store's clock) and its live keys (dedupe claims expire after an hour). Active = threads with a message within the horizon. Flat means: after the first horizon the log and the live keys stay where they are while the history grows tenfold (without retention the log would grow with it, by the first row's KiB every 2,000 messages: extrapolated, not measured here).

| messages | horizons elapsed | threads so far | active threads | live keys | log KiB | KiB per active thread |
| --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}
`,
  };
}
