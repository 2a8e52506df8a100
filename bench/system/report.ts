/**
 * The system suite's block of BENCHMARKS.md: markdown for each part, written between the markers
 * below so `npm run bench` (bench/run.ts), which rewrites the rest of the file, keeps it.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import type { FaultResult } from "./faults.js";
import type { LoadResult } from "./load.js";
import { BLOCK_END, BLOCK_START } from "./markers.js";

export const ms = (x: number) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(1) : x.toFixed(0)} ms` : "—");
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
export const goal = (ok: boolean) => (ok ? "met" : "**not met**");

/** The machine, and its load average when the run started (`loadAtStart`: a shared machine's noise). */
export function machine(loadAtStart: number): string {
  const cpu = cpus();
  return `${cpu[0]?.model ?? "unknown"} × ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, ${new Date().toISOString()}, load average ${loadAtStart.toFixed(1)} at start`;
}

export function loadMarkdown(r: LoadResult, cmd: string, concurrency: string): string {
  const s = r.spec;
  const total = s.slackConversations + s.discordConversations;
  const rows = r.platforms.map(
    (p) =>
      `| ${p.platform} | ${p.sent} | ${p.answeredOnce} | ${p.lost} | ${p.duplicated} | ${ms(p.feedback.median)} | ${ms(p.feedback.p99)} | ${ms(p.answer.median)} | ${ms(p.answer.p99)} |`,
  );
  const exactlyOnce = r.all.every((m) => m.answers.length === 1);
  return [
    "### Load",
    "",
    `Reproduce: \`${cmd}\`. ${r.all.length} messages over ${total} conversations (${s.slackConversations} Slack DMs,`,
    `${s.discordConversations} Discord threads opened by a mention), ${s.messagesPerConversation} messages each, closed loop (next message`,
    `${s.thinkMs} ms after the answer), conversations starting over ${s.rampMs / 1000} s; scripted model with 200 ms latency per call,`,
    `no tools; the real bot process with Redis, NEO_MAX_CONCURRENT_TURNS=${concurrency}. Slack conversations are DMs because`,
    "a follow-up in a channel thread makes Neo fetch the thread with `conversations.replies` (Tier 3, 50/min per",
    "workspace) before it acks, so 800 thread follow-ups would need ≥ 16 min at Slack's tier (not measured here).",
    "First status = the first visible sign of work in the conversation (Discord: typing or a status line;",
    "Slack: a status/queued message, a reaction, or the answer itself when nothing came before it).",
    "Two platform limits shape these figures: Slack allows about one post per second per channel (the adapter",
    "waits ~1.1 s between posts in a channel, so with 500 ms think time a DM answer cannot come much before",
    "~0.6 s), and Discord requests share @discordjs/rest's global 50 requests/s (Discord's own limit) — each",
    "Discord message costs a typing call and a post, plus a thread creation for a conversation's first, so many",
    `conversations opening at once queue there (of the 10 slowest Discord answers here, ${slowFirsts(r)} were a conversation's first message).`,
    "",
    `- Throughput: **${r.throughput.toFixed(1)} answered messages/s** (first send to last answer, ${((r.endedAt - r.startedAt) / 1000).toFixed(1)} s)`,
    `- Peak memory of the bot process: **${mib(r.peakRssBytes)} RSS** (VmHWM)`,
    `- Every message answered exactly once: **${exactlyOnce ? "yes" : "NO"}**`,
    `- Slack deliveries: ${r.slackDelivery.attempts} attempts, ${r.slackDelivery.failed} failed/retried, ${r.slackDelivery.gaveUp} given up`,
    "",
    "| platform | messages | answered once | lost | duplicated | first status p50 | p99 | answer p50 | p99 |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `Platform calls the fakes answered: ${callSummary(r.calls)}.`,
    `The bot's /metrics at the end: ${r.botMetrics.map((l) => `\`${l}\``).join(", ") || "(not reachable)"}.`,
  ].join("\n");
}

/** Lost messages, Slack ones with their delivery attempts (a 200 means Neo had taken it). */
function lostList(f: FaultResult): string {
  const lost = f.load.all.filter((s) => s.answers.length === 0);
  if (!lost.length) return "";
  const shown = lost.slice(0, 12).map((s) => {
    const d = (s.sentAt - f.faultAt) / 1000;
    const when =
      d < 0 ? `sent ${(-d).toFixed(1)} s before the fault` : `sent ${d.toFixed(1)} s into the fault`;
    return s.deliveries ? `${s.token} (${when}; Slack: ${s.deliveries.join(" → ")})` : `${s.token} (${when})`;
  });
  return `Lost: ${shown.join(", ")}${lost.length > 12 ? ", …" : ""}.`;
}

function logList(f: FaultResult): string {
  if (!f.topLogs.length) return "";
  return `Bot warnings/errors: ${f.topLogs.map(([m, n]) => `"${m}" × ${n}`).join(", ")}.`;
}

/** How many of the 10 slowest Discord answers were a conversation's first message (token `…x0`). */
function slowFirsts(r: LoadResult): number {
  return r.all
    .filter((s) => s.platform === "discord" && s.answers.length > 0)
    .sort((a, b) => b.answers[0]! - b.sentAt - (a.answers[0]! - a.sentAt))
    .slice(0, 10)
    .filter((s) => s.token.endsWith("x0")).length;
}

function callSummary(calls: Record<string, number>): string {
  return Object.entries(calls)
    .filter(([k]) => !/auth\.test|gateway|users\/@me|applications/.test(k))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} × ${n}`)
    .join(", ");
}

export function faultsMarkdown(results: FaultResult[], spec: string): string {
  const rows = results.map((f) => {
    const lost = f.load.lostTokens.length;
    const dup = f.load.duplicatedTokens.length;
    const perPlatform = f.load.platforms.map((p) => `${p.platform} ${p.lost}/${p.duplicated}`).join(", ");
    const late = f.load.all.filter((s) => s.late).length;
    return `| ${f.title} | ${f.load.all.length} | ${lost} (${goal(lost === 0)}) | ${dup} (${goal(dup === 0)}) | ${perPlatform} | ${late} | ${ms(f.firstAnswerAfterMs)} | ${ms(f.backlogClearedMs)} |`;
  });
  const details = results.map(
    (f) =>
      `- **${f.title}** (\`npm run bench:system -- fault:${f.name}\`): ${[
        `${f.action}.`,
        f.removedAt > f.faultAt ? `${f.sentDuringFault} messages sent while it lasted;` : "",
        `Slack deliveries ${f.load.slackDelivery.attempts} attempts, ${f.load.slackDelivery.failed} failed, ${f.load.slackDelivery.gaveUp} given up.`,
        ...f.notes.map((n) => `${n}.`),
        lostList(f),
        logList(f),
      ]
        .filter(Boolean)
        .join(" ")}`,
  );
  return [
    "### Faults under load",
    "",
    `Each fault runs on a fresh stack while a smaller load runs: ${spec}. The fault starts 4 s into the load.`,
    "Slack deliveries that fail are retried like Slack does (same event_id, at once, +5 s, +25 s: scaled down",
    "from Slack's +1 min, +5 min); Discord, like Discord, never redelivers a message dispatched while no bot",
    "session was connected. Lost = never answered; duplicated = answered more than once (goal 0 for both).",
    "Recovery is measured from the moment the fault was removed: *first answer* = the first answer to a",
    "message sent after it; *backlog* = until the last message sent before it got its answer. *Answered only by",
    "a later turn* = its own turn failed (the person saw an error notice) and the model answered it together with",
    "the person's next message (the bench model answers every unanswered question in the transcript); counted as",
    "not lost. One run each: losses depend on what was in flight at the instant of the fault and vary between runs.",
    "",
    "| fault | messages | lost | duplicated | lost/dup by platform | answered only by a later turn | first answer after | backlog cleared after |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    ...details,
  ].join("\n");
}

/** Write `body` between the markers in BENCHMARKS.md (appended at the end the first time). */
/** Replace the block between `open` and `close` (the system suite's by default), or append it. */
export function writeBlock(path: string, body: string, open = BLOCK_START, close = BLOCK_END): void {
  const block = `${open}\n${body.trim()}\n${close}\n`;
  const doc = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmarks\n";
  const start = doc.indexOf(open);
  const end = doc.indexOf(close);
  const next =
    start >= 0 && end > start
      ? `${doc.slice(0, start)}${block}${doc.slice(end + close.length).replace(/^\n/, "")}`
      : `${doc.trimEnd()}\n\n${block}`;
  writeFileSync(path, next);
}
