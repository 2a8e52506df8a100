/**
 * Helpers for tool-surface tests: manifests that spawn the fixture servers and the published
 * reference servers exactly as a deployment would, and a turn context built from plain objects.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ServerSpecInput } from "../../src/core/tools/manifest.js";
import type { ToolCallContext } from "../../src/core/tools/types.js";

export const ROOT = resolve(import.meta.dirname, "../..");

/** A fixture server from test/fixtures/mcp, run with node's tsx loader from the repo root. */
export function fixture(name: string, env: Record<string, string> = {}): ServerSpecInput {
  return {
    command: process.execPath,
    args: ["--import", "tsx", `test/fixtures/mcp/${name}.ts`],
    env,
    cwd: ROOT,
  };
}

/** The published server-filesystem, serving `dir`. */
export function filesystemServer(dir: string): ServerSpecInput {
  return {
    command: process.execPath,
    args: [join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), dir],
    env: {},
  };
}

/** The published server-everything over stdio. */
export function everythingServer(): ServerSpecInput {
  return {
    command: process.execPath,
    args: [join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"],
    env: {},
  };
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `neo-${prefix}-`));
}

/** A turn context; the reporter and approval channel record what they are given. */
export function testContext(signal: AbortSignal = new AbortController().signal): ToolCallContext {
  return {
    conversation: "console:local:test:main",
    speaker: { userKey: "console:local:tester", displayName: "Tester" },
    place: { kind: "dm", workspace: "local" },
    reporter: { say: async () => {}, status: async () => {}, notice: async () => {} },
    approvals: { present: async () => undefined, update: async () => {} },
    signal,
    step: { callIds: ["call_1"] },
  };
}

/** A manifest placeholder, `${NAME}` (built so linters do not take it for a template mistake). */
export function ref(name: string): string {
  return ["$", "{", name, "}"].join("");
}
