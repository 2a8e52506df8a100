/**
 * Streamable-HTTP servers from the manifest: the published server-everything in its
 * `streamableHttp` mode, started here on a free port, reached by `url` with `headers`; and an SDK
 * server in this process, to see a cancelled turn's call cancelled on the server over HTTP too.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer as createHttpServer } from "node:http";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { ToolTransportError } from "../../src/core/tools/types.js";
import { registerHangTools } from "../fixtures/mcp/hang-tools.js";
import { freePort } from "../support/free-port.js";
import { ROOT, ref, testContext } from "./helpers.js";

let child: ChildProcess;
let port = 0;
let surface: McpToolSurface;

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

describe("cancellation over streamable HTTP", () => {
  it("cancels a cancelled turn's running call on the server", async () => {
    const mcp = new McpServer({ name: "hang-http", version: "1.0.0" });
    registerHangTools(mcp);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await mcp.connect(transport);
    const http = createHttpServer((req, res) => void transport.handleRequest(req, res));
    http.listen(0, "127.0.0.1");
    await once(http, "listening");
    const port = (http.address() as { port: number }).port;
    const s = await createToolSurface({
      manifest: parseManifest({ servers: { h: { url: `http://127.0.0.1:${port}/mcp` } } }),
      resultMaxChars: 10_000,
      callTimeoutMs: 20_000,
    });
    try {
      const hangs = async (want: string) => {
        let last = "";
        for (let i = 0; i < 1000 && last !== want; i++)
          last = (await s.dispatch("h__hangs", {}, testContext())).content;
        expect(last).toBe(want);
      };
      const turn = new AbortController();
      const call = s.dispatch("h__hang", {}, testContext(turn.signal)).catch((e: unknown) => e);
      await hangs("running=1 cancelled=0");
      turn.abort("cancel");
      expect(await call).toBeInstanceOf(ToolTransportError);
      await hangs("running=0 cancelled=1");
    } finally {
      await s.close();
      await mcp.close();
      http.closeAllConnections();
      http.close();
    }
  });
});
