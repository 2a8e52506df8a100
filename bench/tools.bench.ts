/**
 * Tool surface bench: the overhead of one `dispatch` (lookup, class check, timeout, cancellation,
 * rendering, cutting, counting, logging) over calling the MCP SDK `Client` directly, on the same
 * server program over stdio in the same run. Calls alternate one by one so drift hits both sides
 * alike, and each case runs in rounds with fresh server processes, the surface's spawned first in
 * half of them: in an A/A run (two plain SDK clients) the process spawned first answered up to 5 % faster.
 * Goal: median ratio <= 1.1. Run alone: `npx tsx bench/tools.bench.ts`.
 */
import { cpus, loadavg } from "node:os";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { setLogLevel, setLogSink } from "../src/core/log.js";
import { parseManifest, type ServerSpecInput } from "../src/core/tools/manifest.js";
import { createToolSurface } from "../src/core/tools/surface.js";
import type { ToolCallContext } from "../src/core/tools/types.js";
import type { BenchSection } from "./types.js";

const ROOT = resolve(import.meta.dirname, "..");
const ROUNDS = 4;
const WARMUP = 200;
/** Timed calls per side per round. */
const CALLS = 1000;
/** Calls per side per round timed for CPU, as one block. */
const CPU_CALLS = 500;

interface Case {
  label: string;
  spec: { command: string; args: string[]; cwd: string };
  tool: string;
  args: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    label: "fixture wallet `get_balance`",
    spec: { command: process.execPath, args: ["--import", "tsx", "test/fixtures/mcp/wallet.ts"], cwd: ROOT },
    tool: "get_balance",
    args: { asset: "USDC" },
  },
  {
    label: "server-everything `echo`",
    spec: {
      command: process.execPath,
      args: [resolve(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"],
      cwd: ROOT,
    },
    tool: "echo",
    args: { message: "hello from the bench" },
  },
];

const ctx: ToolCallContext = {
  conversation: "console:bench:tools:main",
  speaker: { userKey: "console:bench:user", displayName: "Bench" },
  place: { kind: "dm", workspace: "local" },
  reporter: { say: async () => {}, status: async () => {}, notice: async () => {} },
  approvals: { present: async () => undefined, update: async () => {} },
  step: { callIds: ["call_1"] },
  signal: new AbortController().signal,
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

interface Measured {
  /** Median wall time per call, ms. */
  surface: number;
  direct: number;
  /** Median (over rounds) client-process CPU per call, ms. */
  surfaceCpu: number;
  directCpu: number;
}

interface Sides {
  viaSurface: () => Promise<void>;
  direct: () => Promise<void>;
  close: () => Promise<void>;
}

/** A surface and a plain SDK client on fresh processes of the case's server, spawned in that order. */
async function open(c: Case, surfaceFirst: boolean): Promise<Sides> {
  const spec: ServerSpecInput = { ...c.spec, env: {} };
  const startSurface = () =>
    createToolSurface({
      manifest: parseManifest({ servers: { s: spec } }),
      resultMaxChars: 20_000,
      callTimeoutMs: 60_000,
    });
  const startClient = async () => {
    const client = new Client({ name: "bench", version: "1" }, { capabilities: {} });
    await client.connect(new StdioClientTransport({ ...c.spec, stderr: "pipe" }));
    await client.listTools();
    return client;
  };
  const surface = surfaceFirst ? await startSurface() : undefined;
  const client = await startClient();
  const tools = surface ?? (await startSurface());
  const name = `s__${c.tool}`;
  return {
    viaSurface: async () => {
      const r = await tools.dispatch(name, c.args, ctx);
      if (r.isError) throw new Error(`bench call failed: ${r.content}`);
    },
    direct: async () => {
      const r = await client.callTool({ name: c.tool, arguments: c.args }, undefined, { timeout: 60_000 });
      if (r.isError) throw new Error("bench call failed");
    },
    close: async () => {
      await client.close();
      await tools.close();
    },
  };
}

async function measure(c: Case): Promise<Measured> {
  // Each call's log line is built as in production (info), then dropped rather than printed:
  // the bench measures Neo, not the terminal.
  setLogLevel("info");
  setLogSink(() => {});
  const a: number[] = [];
  const b: number[] = [];
  const cpuA: number[] = [];
  const cpuB: number[] = [];
  const timed = async (fn: () => Promise<void>, out: number[]) => {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  };
  // Client-side CPU per call (this process only; the servers run in children): robust to load
  // from other processes, which wall time on a shared machine is not.
  const cpu = async (fn: () => Promise<void>) => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < CPU_CALLS; i++) await fn();
    const d = process.cpuUsage(c0);
    return (d.user + d.system) / CPU_CALLS / 1000;
  };
  for (let round = 0; round < ROUNDS; round++) {
    const { viaSurface, direct, close } = await open(c, round % 2 === 0);
    try {
      for (let i = 0; i < WARMUP; i++) {
        await viaSurface();
        await direct();
      }
      // Strictly alternating, with the order flipped every other pair.
      for (let i = 0; i < CALLS; i++) {
        if (i % 2 === 0) {
          await timed(viaSurface, a);
          await timed(direct, b);
        } else {
          await timed(direct, b);
          await timed(viaSurface, a);
        }
      }
      if (round % 2 === 0) {
        cpuA.push(await cpu(viaSurface));
        cpuB.push(await cpu(direct));
      } else {
        cpuB.push(await cpu(direct));
        cpuA.push(await cpu(viaSurface));
      }
    } finally {
      await close();
    }
  }
  return { surface: median(a), direct: median(b), surfaceCpu: median(cpuA), directCpu: median(cpuB) };
}

export async function run(): Promise<BenchSection> {
  const rows: string[] = [];
  for (const c of CASES) {
    const m = await measure(c);
    const ratio = m.surface / m.direct;
    const us = (ms: number) => (ms * 1000).toFixed(0);
    rows.push(
      `| ${c.label} | ${us(m.direct)} | ${us(m.surface)} | ${us(m.surface - m.direct)} | ${ratio.toFixed(3)} | ${ratio <= 1.1 ? "met" : "NOT met"} | ${us(m.directCpu)} / ${us(m.surfaceCpu)} (${(m.surfaceCpu / m.directCpu).toFixed(2)}×) |`,
    );
  }
  const markdown = [
    `Median wall time per call over ${ROUNDS * CALLS} sequential calls each (the surface at log level info, its lines built and then dropped): ${ROUNDS} rounds with fresh server processes (the surface's spawned first in half of them), ${WARMUP} warm-up calls then ${CALLS} timed calls per side per round, stdio, strictly alternating (order flipped every other pair). Client CPU: this process's CPU per call (servers excluded), median of ${ROUNDS} blocks of ${CPU_CALLS} calls. Load average at the start: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores.`,
    "",
    "| server / tool | SDK Client direct (µs) | surface `dispatch` (µs) | overhead (µs) | wall ratio | goal ≤ 1.1 | client CPU direct / dispatch (µs) |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
  return { title: "Tools: dispatch overhead vs the MCP SDK client", markdown };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const section = await run();
  console.log(`## ${section.title}\n\n${section.markdown}`);
}
