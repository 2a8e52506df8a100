/**
 * What reaches Neo from a server beside a tool's result, against real servers over stdio: the
 * published server-everything's progress notifications (shown as the turn's Status) and a fixture
 * that sends sampling and roots requests Neo never offered (declined with a clear JSON-RPC error).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { everythingServer, fixture, testContext } from "./helpers.js";

let surface: McpToolSurface;

beforeAll(async () => {
  surface = await createToolSurface({
    manifest: parseManifest({ servers: { everything: everythingServer(), asks: fixture("asks-back") } }),
    resultMaxChars: 2000,
    callTimeoutMs: 10_000,
  });
});

afterAll(async () => {
  await surface.close();
});

describe("requests and notifications from servers", () => {
  it("shows a call's progress notifications as the turn's Status", async () => {
    const statuses: string[] = [];
    const ctx = testContext();
    ctx.reporter = { ...ctx.reporter, status: async (text) => void statuses.push(text) };
    const name = "everything__trigger-long-running-operation";
    const result = await surface.dispatch(name, { duration: 0.3, steps: 3 }, ctx);
    expect(result.isError).toBe(false);
    expect(result.content).toContain("Long running operation completed");
    expect(statuses).toEqual([`• ${name}: 1 of 3`, `• ${name}: 2 of 3`, `• ${name}: 3 of 3`]);
  });

  it("declines a server's sampling request with a JSON-RPC error that says why", async () => {
    const result = await surface.dispatch("asks__ask_sampling", {}, testContext());
    expect(result.content).toBe(
      'refused: MCP error -32601: Neo does not let MCP servers use its model (sampling is not offered) (server "asks")',
    );
  });

  it("declines any other request it does not handle, naming the method", async () => {
    const result = await surface.dispatch("asks__ask_roots", {}, testContext());
    expect(result.content).toBe(
      'refused: MCP error -32601: Neo does not handle "roots/list" from MCP servers (server "asks")',
    );
  });
});
