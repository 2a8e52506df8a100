/** Pure pieces of the tool surface: classification, naming, schema normalisation, rendering, manifest. */
import { describe, expect, it } from "vitest";
import { classifyTool, DEFAULT_ESCALATE_PATTERNS, effectivePatterns } from "../../src/core/tools/classify.js";
import { ManifestError, MissingEnvVarError } from "../../src/core/tools/errors.js";
import { parseManifest, resolveServerSpec } from "../../src/core/tools/manifest.js";
import { bindNames, candidateName, VALID_NAME } from "../../src/core/tools/naming.js";
import { renderResult, truncateResult } from "../../src/core/tools/render.js";
import { normalizeInputSchema } from "../../src/core/tools/schema-normalize.js";
import { ref } from "./helpers.js";

describe("classification", () => {
  it("marks every default pattern Escalate, case-insensitively, and leaves reads and dry-runs Natural", () => {
    for (const p of DEFAULT_ESCALATE_PATTERNS) {
      expect(classifyTool(`do_${p.toUpperCase()}_now`, DEFAULT_ESCALATE_PATTERNS)).toBe("escalate");
    }
    for (const n of [
      "get_balance",
      "list_transactions",
      "simulate_trade",
      "compile",
      "lookup_tx",
      "read_file",
    ]) {
      expect(classifyTool(n, DEFAULT_ESCALATE_PATTERNS)).toBe("natural");
    }
  });

  it("uses the server's list, then the override, then the manifest's, then the defaults", () => {
    expect(effectivePatterns(["a"], ["b"], ["c"])).toEqual(["a"]);
    expect(effectivePatterns(undefined, ["b"], ["c"])).toEqual(["b"]);
    expect(effectivePatterns(undefined, undefined, ["c"])).toEqual(["c"]);
    expect(effectivePatterns(undefined, undefined, undefined)).toBe(DEFAULT_ESCALATE_PATTERNS);
    expect(classifyTool("transfer", ["launch"])).toBe("natural");
  });
});

describe("naming", () => {
  it("coerces names into the OpenAI charset", () => {
    expect(candidateName({ alias: "fs", tool: "read file" })).toBe("fs__read_file");
    expect(candidateName({ alias: "fs", tool: "fs.read.v2" })).toBe("fs__fs_read_v2");
    expect(candidateName({ alias: "x", tool: "café_menü" })).toBe("x__cafe_menu");
    expect(candidateName({ alias: "x", tool: "天气" })).toMatch(/^x__tool_[0-9a-f]{6}$/);
    expect(candidateName({ alias: "x", tool: "a".repeat(100) })).toHaveLength(64);
  });

  it("never gives two tools the same name, and the result does not depend on order", () => {
    const long = "b".repeat(80);
    const ids = [
      { alias: "u", tool: "read file" },
      { alias: "u", tool: "read_file" },
      { alias: "u", tool: `${long}_alpha` },
      { alias: "u", tool: `${long}_beta` },
      { alias: "u", tool: "天气" },
      { alias: "u", tool: "天" },
    ];
    const a = bindNames(ids);
    const b = bindNames([...ids].reverse());
    expect(a.size).toBe(ids.length);
    for (const name of a.keys()) expect(name).toMatch(VALID_NAME);
    expect([...a.entries()].sort()).toEqual([...b.entries()].sort());
    // The already-valid name keeps itself; the sanitized twin gets a hash suffix.
    expect(a.get("u__read_file")).toEqual({ alias: "u", tool: "read_file" });
    const twin = [...a].find(([, id]) => id.tool === "read file")![0];
    expect(twin).toMatch(/^u__read_file_[0-9a-f]{6}$/);
  });
});

describe("schema normalisation", () => {
  it("keeps an ordinary object schema and drops $schema", () => {
    const out = normalizeInputSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
      additionalProperties: false,
    });
    expect(out).toEqual({
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
      additionalProperties: false,
    });
  });

  it("flattens root combinators into one object root", () => {
    const out = normalizeInputSchema({
      anyOf: [
        {
          type: "object",
          properties: { a: { type: "string" }, id: { type: "number" } },
          required: ["a", "id"],
        },
        {
          type: "object",
          properties: { b: { type: "string" }, id: { type: "number" } },
          required: ["b", "id"],
        },
      ],
      allOf: [{ properties: { c: { type: "boolean" } }, required: ["c"] }],
    });
    expect(out.type).toBe("object");
    expect(Object.keys(out.properties as object).sort()).toEqual(["a", "b", "c", "id"]);
    expect((out.required as string[]).sort()).toEqual(["c", "id"]);
    for (const k of ["anyOf", "oneOf", "allOf", "$schema"]) expect(out).not.toHaveProperty(k);
  });

  it("turns a missing or non-object schema into an empty object schema", () => {
    expect(normalizeInputSchema(undefined)).toEqual({ type: "object", properties: {} });
    expect(normalizeInputSchema({ type: ["object", "null"] })).toEqual({ type: "object", properties: {} });
  });
});

describe("rendering and cutting", () => {
  it("renders text, images, audio, resources, links and structured content as text", () => {
    const text = renderResult({
      content: [
        { type: "text", text: "hello" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "audio", data: "AAA=", mimeType: "audio/wav" },
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "body" } },
        { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA" } },
        { type: "resource_link", uri: "file:///c", name: "c" },
      ],
    });
    expect(text).toBe(
      'hello\n[image image/png, 3 bytes]\n[audio audio/wav, 2 bytes]\n[resource file:///a.txt (text/plain)]\nbody\n[resource file:///b.bin] 3 bytes\n[resource link file:///c "c"]',
    );
    expect(renderResult({ content: [], structuredContent: { sum: 3 } })).toBe('{"sum":3}');
  });

  it("cuts long results with a marker saying how much was cut", () => {
    const out = truncateResult("x".repeat(1000), 300);
    expect(out.startsWith("x".repeat(300))).toBe(true);
    expect(out).toContain("700 of 1000 characters cut");
    expect(truncateResult("short", 300)).toBe("short");
  });
});

describe("manifest", () => {
  it("names the server and the field in errors", () => {
    expect(() => parseManifest({ servers: { wallet: { command: "" } } }, "agents/x.json")).toThrow(
      /agents\/x\.json: server "wallet" field "command"/,
    );
    expect(() => parseManifest({ servers: { bad__alias: { command: "x" } } })).toThrow(ManifestError);
    expect(() => parseManifest({ servers: { web: { url: "http://x", bogus: 1 } } })).toThrow(/server "web"/);
  });

  it("resolves placeholders (with and without defaults) from the given environment and names what is missing", () => {
    const m = parseManifest({
      servers: {
        w: {
          command: ref("BIN"),
          args: [`${ref("DIR:-./data")}/files`],
          env: { TOKEN: ref("TOKEN") },
          cwd: ref("HOME"),
        },
      },
    });
    const spec = resolveServerSpec("w", m.servers.w!, { BIN: "node", TOKEN: "t0k", HOME: "/h" });
    expect(spec).toMatchObject({ command: "node", args: ["./data/files"], env: { TOKEN: "t0k" }, cwd: "/h" });
    expect(() => resolveServerSpec("w", m.servers.w!, { BIN: "node", HOME: "/h" })).toThrow(
      MissingEnvVarError,
    );
    expect(() => resolveServerSpec("w", m.servers.w!, { BIN: "node", HOME: "/h" })).toThrow(
      /server "w": env.TOKEN needs environment variable TOKEN/,
    );
  });
});
