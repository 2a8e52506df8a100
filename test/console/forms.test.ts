/**
 * The console's form channel against a real MCP server that asks during a tool call: the typed
 * answers (a default kept with Enter, a bad value asked again) reach the server, and `n` declines.
 */
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askFromStream } from "../../src/adapters/console/approval-channel.js";
import { createConsoleForms } from "../../src/adapters/console/forms.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { fixture, testContext } from "../tools/helpers.js";

let surface: McpToolSurface;

beforeAll(async () => {
  surface = await createToolSurface({
    manifest: parseManifest({ servers: { desk: fixture("elicits") } }),
    resultMaxChars: 2000,
    callTimeoutMs: 10_000,
  });
});

afterAll(async () => {
  await surface.close();
});

function consoleForms(typed: string) {
  const input = new PassThrough();
  const out = new PassThrough();
  let shown = "";
  out.on("data", (d: Buffer) => {
    shown += d.toString();
  });
  input.end(typed);
  const forms = createConsoleForms(askFromStream(input, out), (text) => {
    shown += text;
  });
  return { forms, shown: () => shown };
}

describe("console forms", () => {
  it("asks each field; Enter keeps the default, a bad value is asked again; the answer reaches the server", async () => {
    const c = consoleForms("y\nAda\n\nmaybe\nyes\n20:30\n");
    const result = await surface.dispatch("desk__book_table", {}, { ...testContext(), forms: c.forms });
    expect(result.content).toBe('accept: {"name":"Ada","party":2,"terrace":true,"time":"20:30"}');
    expect(c.shown()).toContain('Server "desk" asks: Who is the table for?');
    expect(c.shown()).toContain("Party size [2]: ");
    expect(c.shown()).toContain('"Terrace" must be yes or no');
    expect(c.shown()).toContain("Time (19:00 / 20:30) [19:00]: ");
  });

  it("n declines, and the model is told", async () => {
    const c = consoleForms("n\n");
    const result = await surface.dispatch("desk__book_table", {}, { ...testContext(), forms: c.forms });
    expect(result.content).toBe(
      'decline: {}\n[Tester declined the question "Who is the table for?" from server "desk"]',
    );
  });
});
