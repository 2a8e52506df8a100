/**
 * `npm run bench:system [-- part...]`: the system suite against the REAL bot process and local fakes
 * (see bench/system/stack.ts). Parts: `overhead`, `load`, `fault:redis`, `fault:redis-aof`,
 * `fault:model`, `fault:mcp`, `fault:bot`, or `faults` for all of them; no argument runs everything and rewrites the suite's block
 * of BENCHMARKS.md. A partial run prints its markdown and leaves BENCHMARKS.md alone.
 * Fails (exit 1) when the load did not answer every message exactly once. Not part of `npm test`.
 */
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { FAULT_ORDER, type FaultName, type FaultResult, runFault } from "./faults.js";
import { type LoadResult, type LoadSpec, runLoad } from "./load.js";
import { runOverhead } from "./overhead.js";
import { runBenchMain } from "./procs.js";
import { faultsMarkdown, loadMarkdown, machine, writeBlock } from "./report.js";
import { overheadMarkdown } from "./report-overhead.js";
import { startStack } from "./stack.js";

const BENCHMARKS = fileURLToPath(new URL("../../BENCHMARKS.md", import.meta.url));
/** Neo's shipped NEO_MAX_CONCURRENT_TURNS. */
const DEFAULT_CONCURRENCY = 8;
/** The load and faults run with a slot per conversation (see "Load" in the report for why). */
const CONCURRENCY = "200";

const LOAD: LoadSpec = {
  slackConversations: 100,
  discordConversations: 100,
  messagesPerConversation: 5,
  thinkMs: 500,
  rampMs: 2000,
  answerTimeoutMs: 30_000,
  drainMs: 60_000,
  prefix: "ld",
};

/** The same shape, smaller, at the shipped default concurrency. */
const DEFAULT_PROBE: LoadSpec = {
  ...LOAD,
  slackConversations: 20,
  discordConversations: 20,
  messagesPerConversation: 3,
  prefix: "lq",
};

const FAULT_LOAD: Omit<LoadSpec, "prefix"> = {
  slackConversations: 30,
  discordConversations: 30,
  messagesPerConversation: 8,
  thinkMs: 1000,
  rampMs: 2000,
  answerTimeoutMs: 20_000,
  drainMs: 45_000,
};
const FAULT_PREFIX: Record<FaultName, string> = {
  redis: "fr",
  "redis-aof": "fa",
  model: "fm",
  mcp: "fx",
  bot: "fb",
};

const log = (s: string) => process.stderr.write(`bench:system: ${s}\n`);

async function loadPart(spec: LoadSpec, concurrency: string): Promise<LoadResult> {
  const n = spec.slackConversations + spec.discordConversations;
  log(`load: ${n * spec.messagesPerConversation} messages, ${n} conversations, concurrency ${concurrency}`);
  const stack = await startStack({
    latencyMs: 200,
    mcp: false,
    env: { NEO_MAX_CONCURRENT_TURNS: concurrency },
  });
  try {
    await stack.startBot();
    const r = await runLoad(stack, spec);
    if (r.lostTokens.length || r.duplicatedTokens.length) {
      log(
        `load: lost ${r.lostTokens.join(",") || "none"}; duplicated ${r.duplicatedTokens.join(",") || "none"}`,
      );
      log(`bot output tail:\n${stack.bot().output().slice(-3000)}`);
    }
    log(`load: ${r.throughput.toFixed(1)} msg/s`);
    return r;
  } finally {
    await stack.close();
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const all = args.length === 0;
  const wants = (part: string) => all || args.includes(part);
  const faultNames = FAULT_ORDER.filter((f) => wants("faults") || wants(`fault:${f}`));
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const sections: string[] = [];
  let exactlyOnce = true;

  if (wants("overhead")) {
    log("overhead: Neo vs bare Bolt + model vs Chat SDK");
    const r = await runOverhead(50, DEFAULT_CONCURRENCY);
    sections.push(overheadMarkdown(r));
  }
  if (wants("load")) {
    const full = await loadPart(LOAD, CONCURRENCY);
    exactlyOnce = full.all.every((m) => m.answers.length === 1);
    sections.push(loadMarkdown(full, "npm run bench:system -- load", CONCURRENCY));
    const probe = await loadPart(DEFAULT_PROBE, String(DEFAULT_CONCURRENCY));
    sections.push(
      loadMarkdown(probe, "npm run bench:system -- load", String(DEFAULT_CONCURRENCY)).replace(
        "### Load",
        "### Load at the shipped default NEO_MAX_CONCURRENT_TURNS (smaller)",
      ),
    );
  }
  const faultResults: FaultResult[] = [];
  for (const name of faultNames) {
    log(`fault: ${name}`);
    const r = await runFault(
      name,
      { ...FAULT_LOAD, prefix: FAULT_PREFIX[name] },
      { NEO_MAX_CONCURRENT_TURNS: CONCURRENCY },
    );
    log(`fault ${name}: lost ${r.load.lostTokens.length}, duplicated ${r.load.duplicatedTokens.length}`);
    faultResults.push(r);
  }
  if (faultResults.length) {
    const f = FAULT_LOAD;
    const spec = `${(f.slackConversations + f.discordConversations) * f.messagesPerConversation} messages over ${f.slackConversations} Slack DMs + ${f.discordConversations} Discord threads, ${f.messagesPerConversation} each, ${f.thinkMs} ms think time, model latency 200 ms`;
    sections.push(faultsMarkdown(faultResults, spec));
  }

  const took = ((Date.now() - started) / 1000).toFixed(0);
  const body = [
    "## System suite (`npm run bench:system`)",
    "",
    `_Source: \`bench/system/\` (${took} s). ${machine(loadAtStart)}. The bot under test is the real process`,
    "(`node --import tsx src/main.ts`) configured only by environment variables to use a fake Slack Web API,",
    "a fake Discord (REST + gateway), a scripted OpenAI-compatible endpoint, a bench-owned `redis-server` and",
    "a bench MCP manifest; the load drivers are real signed Slack requests and real gateway dispatches._",
    "",
    sections.join("\n\n"),
  ].join("\n");
  if (all) {
    writeBlock(BENCHMARKS, body);
    log(`wrote the system block of BENCHMARKS.md (${took} s)`);
  } else {
    process.stdout.write(`${body}\n`);
  }
  if (!exactlyOnce) {
    log("FAILED: the load did not answer every message exactly once");
    return 1;
  }
  return 0;
}

runBenchMain("bench:system", main);
