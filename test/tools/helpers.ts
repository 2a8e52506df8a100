/**
 * Helpers for tool-surface tests: manifests that spawn the fixture servers and the published
 * reference servers exactly as a deployment would, and a turn context built from plain objects.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { HttpServerSpec, ServerSpecInput } from "../../src/core/tools/manifest.js";
import { createServerConnection } from "../../src/core/tools/server-connection.js";
import type { ToolCallContext } from "../../src/core/tools/types.js";
import { mcpFixturePath } from "../support/mcp-fixtures.js";

export const ROOT = resolve(import.meta.dirname, "../..");

/** A fixture server from test/fixtures/mcp (built for the run: test/support/mcp-fixtures.ts), from the repo root. */
export function fixture(name: string, env: Record<string, string> = {}): ServerSpecInput {
  return {
    command: process.execPath,
    args: [mcpFixturePath(name)],
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

/**
 * Start a connection to the remote OAuth server `spec` as `authProvider` signs it in, call its
 * `whoami` tool and close: the tool's text, or undefined when the connection could not start (its
 * warnings pushed to `warnings`).
 */
export async function whoamiAs(
  alias: string,
  spec: HttpServerSpec,
  authProvider: OAuthClientProvider,
  warnings: string[] = [],
): Promise<string | undefined> {
  const conn = createServerConnection({
    alias,
    spec,
    env: {},
    spawnTimeoutMs: 5_000,
    callTimeoutMs: 5_000,
    maxRestarts: 0,
    onToolsChanged: () => {},
    onWarning: (m) => warnings.push(m),
    authProvider,
  });
  await conn.start();
  try {
    if (conn.info().status !== "ready") return undefined;
    const r = await conn.call("whoami", {}, "whoami");
    return (r.content[0] as { text: string }).text;
  } finally {
    await conn.close();
  }
}
