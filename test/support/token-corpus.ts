/**
 * Realistic text for measuring the token estimator against the real tokenizer: prose (package
 * READMEs), code (SDK sources), and JSON tool results (generated deterministically: transaction
 * records with hashes and addresses, search hits with URLs, file listings with paths).
 */
import { readFileSync } from "node:fs";

/** A file inside an installed package (the repo's node_modules). */
function packageFile(pkg: string, file: string): string {
  return readFileSync(new URL(`../../node_modules/${pkg}/${file}`, import.meta.url), "utf8");
}

/** Deterministic pseudo-random hex (xorshift), so the corpus is the same on every run. */
function hexStream(seed: number): (len: number) => string {
  let x = seed >>> 0 || 1;
  return (len) => {
    let s = "";
    while (s.length < len) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      s += (x >>> 0).toString(16).padStart(8, "0");
    }
    return s.slice(0, len);
  };
}

function txRecords(): string {
  const hex = hexStream(7);
  const rows = Array.from({ length: 60 }, (_, i) => ({
    hash: `0x${hex(64)}`,
    from: `0x${hex(40)}`,
    to: `0x${hex(40)}`,
    value: `${(i * 0.137).toFixed(6)} ETH`,
    block: 19_000_000 + i * 3,
    status: i % 7 === 0 ? "reverted" : "success",
    gasUsed: 21_000 + i * 911,
  }));
  return JSON.stringify({ address: rows[0]!.from, count: rows.length, transactions: rows }, null, 2);
}

function searchHits(): string {
  const words = [
    "agent",
    "loop",
    "compaction",
    "token",
    "budget",
    "Discord",
    "Slack",
    "approval",
    "memory",
    "Redis",
  ];
  const hits = Array.from({ length: 40 }, (_, i) => ({
    title: `How ${words[i % 10]} and ${words[(i * 3) % 10]} interact in production systems`,
    url: `https://example.org/blog/${2020 + (i % 6)}/${words[i % 10]!.toLowerCase()}-${i}-guide`,
    snippet: `A practical look at ${words[(i + 2) % 10]} handling, with benchmarks and the failure modes we hit when scaling to ${i * 10 + 100} users.`,
    score: Number((1 - i / 50).toFixed(3)),
  }));
  return JSON.stringify({ query: "agent loop compaction", hits });
}

function fileListing(): string {
  const dirs = [
    "src/core/agent",
    "src/core/llm",
    "src/adapters/discord",
    "test/agent",
    "node_modules/openai/resources",
  ];
  const files = Array.from({ length: 80 }, (_, i) => ({
    path: `/srv/neo/${dirs[i % 5]}/file-${i}.ts`,
    size: 1000 + ((i * 7919) % 50_000),
    modified: `2026-11-${String((i % 28) + 1).padStart(2, "0")}T10:${String(i % 60).padStart(2, "0")}:00Z`,
  }));
  return JSON.stringify(files);
}

export interface CorpusSample {
  kind: "prose" | "code" | "json";
  name: string;
  text: string;
}

export function tokenCorpus(): CorpusSample[] {
  return [
    { kind: "prose", name: "openai README", text: packageFile("openai", "README.md") },
    { kind: "prose", name: "zod README", text: packageFile("zod", "README.md").slice(0, 40_000) },
    { kind: "code", name: "openai client.js", text: packageFile("openai", "client.js") },
    { kind: "code", name: "pino pino.js", text: packageFile("pino", "pino.js") },
    {
      kind: "code",
      name: "MCP SDK client",
      text: packageFile("@modelcontextprotocol/sdk", "dist/esm/client/index.js"),
    },
    { kind: "json", name: "tx records", text: txRecords() },
    { kind: "json", name: "search hits", text: searchHits() },
    { kind: "json", name: "file listing", text: fileListing() },
  ];
}
