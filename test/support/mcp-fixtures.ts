/**
 * The stdio MCP fixture servers (test/fixtures/mcp/*.ts), built once per test run into plain ESM by
 * esbuild (this file is a global setup of its own) and started with plain node. Started through
 * tsx, each process paid ~1 s more CPU for the loader (1.5 s against 0.55 s for the crasher), and
 * the suite starts them many times (once per user, again after each crash), on CI's two cores.
 * Their imports stay external: the SDK and zod load from node_modules as in any server.
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const SOURCES = join(ROOT, "test/fixtures/mcp");
/** Under the repo's node_modules, so the bundles' bare imports resolve from there. */
const BUILT = join(ROOT, "node_modules/.cache/neo-mcp-fixtures");

/** The built fixture `name` (e.g. "crasher"), to run with `node <path>`. */
export function mcpFixturePath(name: string): string {
  return join(BUILT, `${name}.mjs`);
}

/** Vitest global setup (vitest.config.ts): every fixture built before any test file runs. */
export default async function buildMcpFixtures(): Promise<void> {
  const { build } = await import("esbuild");
  const entryPoints = readdirSync(SOURCES)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(SOURCES, f));
  await build({
    entryPoints,
    outdir: BUILT,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  });
}
