/**
 * `npm run conformance:mcp [scenario ...]`: the official MCP conformance suite
 * (@modelcontextprotocol/conformance, client mode) against Neo's MCP client (`client.ts`). Runs
 * every client scenario the installed release lists (or the ones named), a few at a time, and
 * prints each scenario's pass/fail and its failed checks, then the totals. A scenario passes when
 * none of its checks is a FAILURE (warnings are shown, not failed). Exits 1 unless all pass.
 *
 * The suite's 0.1.16 imports `globSync` from `fs`, which Node 22 added; on Node 20 it is loaded
 * with `node20.mjs`, which supplies it (see there).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const require = createRequire(import.meta.url);
const suitePkg = require.resolve("@modelcontextprotocol/conformance/package.json");
const suiteVersion = (JSON.parse(readFileSync(suitePkg, "utf8")) as { version: string }).version;
const suiteCli = join(dirname(suitePkg), "dist/index.js");
const nodeArgs = ["--import", join(here, "node20.mjs"), suiteCli];
const clientCommand = `${join(root, "node_modules/.bin/tsx")} ${join(here, "client.ts")}`;
const parallel = Number(process.env.CONFORMANCE_PARALLEL ?? 3);

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

export interface ScenarioResult {
  scenario: string;
  passed: boolean;
  checks: { success: number; failure: number; warning: number };
  failures: string[];
}

export async function listClientScenarios(): Promise<string[]> {
  const { stdout } = await run(process.execPath, [...nodeArgs, "list", "--client"], { cwd: root });
  return [...stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
}

function findChecks(dir: string): Check[] {
  const file = readdirSync(dir, { recursive: true })
    .map(String)
    .find((p) => p.endsWith("checks.json"));
  return file ? (JSON.parse(readFileSync(join(dir, file), "utf8")) as Check[]) : [];
}

export async function runScenario(scenario: string): Promise<ScenarioResult> {
  const out = mkdtempSync(join(tmpdir(), "neo-conformance-"));
  try {
    const args = [...nodeArgs, "client", "--command", clientCommand, "--scenario", scenario, "-o", out];
    // The CLI exits 1 when a check fails: the checks say which.
    await run(process.execPath, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 }).catch(() => {});
    const checks = findChecks(out);
    const failed = checks.filter((c) => c.status === "FAILURE");
    return {
      scenario,
      passed: checks.length > 0 && failed.length === 0,
      checks: {
        success: checks.filter((c) => c.status === "SUCCESS").length,
        failure: failed.length,
        warning: checks.filter((c) => c.status === "WARNING").length,
      },
      failures: checks.length
        ? failed.map((c) => `${c.id}: ${c.errorMessage ?? "failed"}`)
        : ["no checks recorded (the scenario did not run)"],
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const named = process.argv.slice(2);
  const scenarios = named.length ? named : await listClientScenarios();
  console.log(`@modelcontextprotocol/conformance ${suiteVersion}, ${scenarios.length} client scenarios`);
  const results: ScenarioResult[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, scenarios.length) }, async () => {
      while (next < scenarios.length) {
        const r = await runScenario(scenarios[next++]!);
        results.push(r);
        const { success, failure, warning } = r.checks;
        console.log(
          `${r.passed ? "PASS" : "FAIL"} ${r.scenario} (${success} ok, ${failure} failed, ${warning} warnings)`,
        );
        for (const f of r.failures.slice(0, 3)) console.log(`     ${f.slice(0, 200)}`);
      }
    }),
  );
  const passed = results.filter((r) => r.passed).length;
  console.log(`\n${passed} of ${results.length} client scenarios pass (conformance ${suiteVersion})`);
  process.exitCode = passed === results.length ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
