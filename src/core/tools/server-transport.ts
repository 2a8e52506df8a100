/**
 * The transport to one MCP server, as its manifest entry says: a stdio child (its `createDirs` made
 * first, its stderr piped) or streamable HTTP. Either way every `tools/call` id it sends is noted,
 * so a cancelled call can be named to the server (`cancel.ts`).
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { noteToolCallIds } from "./cancel.js";
import { isStdio, resolveServerSpec, type ServerSpec } from "./manifest.js";
import type { McpSdk } from "./mcp-sdk.js";

/**
 * `onStderr` gets a stdio child's stderr as it comes: it is what explains a crash or a failed start.
 * `authProvider`: an `"auth": "oauth"` server's credentials (the SDK runs the OAuth flow with it).
 */
export async function openTransport(
  sdk: McpSdk,
  alias: string,
  spec: ServerSpec,
  env: Readonly<Record<string, string | undefined>>,
  onStderr: (text: string) => void,
  authProvider?: OAuthClientProvider,
): Promise<Transport> {
  const resolved = resolveServerSpec(alias, spec, env);
  if (isStdio(resolved)) {
    for (const dir of resolved.createDirs)
      await mkdir(resolve(resolved.cwd ?? ".", dir), { recursive: true });
    const t = new sdk.StdioClientTransport({
      command: resolved.command,
      args: resolved.args,
      env: resolved.env,
      ...(resolved.cwd ? { cwd: resolved.cwd } : {}),
      stderr: "pipe",
    });
    t.stderr?.on("data", (chunk: Buffer) => onStderr(chunk.toString("utf8")));
    return noteToolCallIds(t);
  }
  return noteToolCallIds(
    new sdk.StreamableHTTPClientTransport(new URL(resolved.url), {
      requestInit: { headers: resolved.headers },
      ...(authProvider ? { authProvider } : {}),
    }),
  );
}
