/**
 * A streamable-HTTP server from the manifest: the published server-everything in its
 * `streamableHttp` mode, started here on a free port, reached by `url` with `headers`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { ROOT, ref, testContext } from "./helpers.js";

let child: ChildProcess;
let port = 0;
let surface: McpToolSurface;

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const p = (srv.address() as { port: number }).port;
  srv.close();
  await once(srv, "close");
  return p;
}

beforeAll(async () => {
  port = await freePort();
  child = spawn(
    process.execPath,
    [join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"],
    { env: { PATH: process.env.PATH ?? "", PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] },
  );
  // Wait for the server's own "listening" line (or its exit), not for a fixed time.
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(`listening on port ${port}`)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server-everything exited (${code}): ${seen}`)));
  });
  surface = await createToolSurface({
    manifest: parseManifest({
      servers: {
        web: { url: `http://127.0.0.1:${ref("EVERYTHING_PORT")}/mcp`, headers: { "x-test": ref("X_TEST") } },
      },
    }),
    env: { EVERYTHING_PORT: String(port), X_TEST: "neo" },
    resultMaxChars: 10_000,
    callTimeoutMs: 20_000,
  });
});

afterAll(async () => {
  await surface?.close();
  child?.kill();
});

describe("streamable HTTP servers", () => {
  it("lists and calls tools over HTTP like any stdio server", async () => {
    expect(surface.servers()).toMatchObject([{ alias: "web", transport: "http", status: "ready" }]);
    expect(surface.schemas().map((s) => s.function.name)).toContain("web__echo");
    const r = await surface.dispatch("web__echo", { message: "over http" }, testContext());
    expect(r).toEqual({ content: expect.stringContaining("over http"), isError: false });
  });
});
