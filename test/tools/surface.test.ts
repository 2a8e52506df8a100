/**
 * The tool surface against real MCP servers over stdio: the fixtures in test/fixtures/mcp and the
 * published server-everything and server-filesystem, spawned exactly as a manifest says.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { VALID_NAME } from "../../src/core/tools/naming.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { ToolTransportError } from "../../src/core/tools/types.js";
import { UGLY_NAMES } from "../fixtures/mcp/ugly-names.js";
import { everythingServer, filesystemServer, fixture, ref, tempDir, testContext } from "./helpers.js";

const dir = tempDir("surface");
const walletLog = join(dir, "wallet.jsonl");
const files = join(dir, "files");
const ctx = testContext();
const intents: string[] = [];
let surface: McpToolSurface;

beforeAll(async () => {
  mkdirSync(files);
  writeFileSync(join(files, "notes.txt"), "the launch code is 4242\n");
  writeFileSync(join(files, "big.txt"), "0123456789".repeat(500));
  const manifest = parseManifest({
    servers: {
      wallet: fixture("wallet", { WALLET_LOG: ref("TEST_WALLET_LOG") }),
      ugly: fixture("ugly-names"),
      paged: fixture("paged"),
      broken: { ...fixture("never-starts"), spawnTimeoutMs: 1500 },
      missing: { command: "definitely-not-a-command-neo", args: [] },
      fs: filesystemServer(files),
      everything: everythingServer(),
    },
  });
  surface = await createToolSurface({
    manifest,
    env: { ...process.env, TEST_WALLET_LOG: walletLog },
    resultMaxChars: 1000,
    callTimeoutMs: 20_000,
    coreExecute: async (intent) => {
      intents.push(intent);
      return { content: `planned: ${intent}`, isError: false };
    },
    memoryRecall: async (query) => ({ content: `memories about "${query}"`, isError: false }),
  });
});

afterAll(async () => {
  await surface?.close();
});

describe("boot", () => {
  it("serves every working server and records the broken ones as warnings", () => {
    const byAlias = Object.fromEntries(surface.servers().map((s) => [s.alias, s]));
    for (const alias of ["wallet", "ugly", "paged", "fs", "everything"])
      expect(byAlias[alias]!.status).toBe("ready");
    expect(byAlias.broken!.status).toBe("failed");
    expect(byAlias.missing!.status).toBe("failed");
    const warnings = surface.warnings().map((w) => `${w.server}: ${w.message}`);
    expect(warnings.some((w) => /^broken: .*did not start within 1500 ms/.test(w))).toBe(true);
    expect(warnings.some((w) => /^missing: .*ENOENT/.test(w))).toBe(true);
  });

  it("lists every page of tools/list", () => {
    const paged = surface
      .tools()
      .filter((t) => t.server === "paged")
      .map((t) => t.tool);
    expect(paged.sort()).toEqual(["grow", "page_five", "page_four", "page_one", "page_three", "page_two"]);
    expect(surface.servers().find((s) => s.alias === "paged")!.toolCount).toBe(6);
  });
});

describe("classification and naming", () => {
  it("classifies the wallet's transfer and swap Escalate and its reads Natural", () => {
    const wallet = Object.fromEntries(
      surface
        .tools()
        .filter((t) => t.server === "wallet")
        .map((t) => [t.tool, t]),
    );
    expect(wallet.transfer!.class).toBe("escalate");
    expect(wallet.swap!.class).toBe("escalate");
    expect(wallet.get_balance!.class).toBe("natural");
    expect(wallet.list_transactions!.class).toBe("natural");
    expect(wallet.transfer!.name).toBe("wallet__transfer");
  });

  it("binds every ugly name to a unique valid name", () => {
    const ugly = surface.tools().filter((t) => t.server === "ugly");
    expect(ugly.map((t) => t.tool).sort()).toEqual([...UGLY_NAMES].sort());
    const names = surface.tools().map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(VALID_NAME);
    expect(ugly.find((t) => t.tool === "read_file")!.name).toBe("ugly__read_file");
    expect(ugly.find((t) => t.tool === "read file")!.name).toMatch(/^ugly__read_file_[0-9a-f]{6}$/);
  });

  it("dispatches through the bound names, so colliding tools reach their own server tool", async () => {
    for (const t of surface.tools().filter((x) => x.server === "ugly")) {
      const r = await surface.dispatch(t.name, {}, ctx);
      expect(r).toEqual({ content: `called ${t.tool}`, isError: false });
    }
  });
});

describe("schemas", () => {
  it("advertises Natural tools sorted, then core_execute, then memory_recall; never Escalate tools", () => {
    const names = surface.schemas().map((s) => s.function.name);
    const natural = surface
      .tools()
      .filter((t) => t.class === "natural")
      .map((t) => t.name);
    expect(names).toEqual([...[...natural].sort(), "core_execute", "memory_recall"]);
    for (const t of surface.tools().filter((x) => x.class === "escalate"))
      expect(names).not.toContain(t.name);
    expect(names).toContain("fs__read_text_file");
    expect(names).toContain("everything__echo");
    expect(surface.escalateSchemas().map((s) => s.function.name)).toEqual([
      "wallet__swap",
      "wallet__transfer",
    ]);
  });

  it("gives every tool an object-root schema without root combinators or $schema", () => {
    for (const s of [...surface.schemas(), ...surface.escalateSchemas()]) {
      const p = s.function.parameters;
      expect(p.type).toBe("object");
      expect(typeof p.properties).toBe("object");
      for (const k of ["$schema", "oneOf", "anyOf", "allOf", "enum", "not"]) expect(p).not.toHaveProperty(k);
    }
  });

  it("leaves memory_recall out when no recall delegate is given", async () => {
    const bare = await createToolSurface({
      manifest: parseManifest({ servers: {} }),
      resultMaxChars: 1000,
      callTimeoutMs: 5000,
    });
    expect(bare.schemas().map((s) => s.function.name)).toEqual(["core_execute"]);
    expect(await bare.dispatch("memory_recall", { query: "x" }, ctx)).toEqual({
      content: 'unknown tool "memory_recall" — it is not available',
      isError: true,
    });
    expect((await bare.dispatch("core_execute", { intent: "pay" }, ctx)).isError).toBe(true);
    await bare.close();
  });
});

describe("dispatch", () => {
  it("runs Natural tools and returns their text", async () => {
    const r = await surface.dispatch("fs__read_text_file", { path: join(files, "notes.txt") }, ctx);
    expect(r).toEqual({ content: "the launch code is 4242\n", isError: false });
    expect(await surface.dispatch("wallet__get_balance", { asset: "usdc" }, ctx)).toEqual({
      content: "USDC: 1000",
      isError: false,
    });
  });

  it("passes an MCP isError result through in-band", async () => {
    expect(await surface.dispatch("wallet__get_balance", { asset: "DOGE" }, ctx)).toEqual({
      content: "unknown asset DOGE",
      isError: true,
    });
    const outside = await surface.dispatch("fs__read_text_file", { path: "/etc/passwd" }, ctx);
    expect(outside.isError).toBe(true);
  });

  it("answers an unknown tool in-band", async () => {
    expect(await surface.dispatch("wallet__steal", {}, ctx)).toEqual({
      content: 'unknown tool "wallet__steal" — it is not available',
      isError: true,
    });
  });

  it("refuses an Escalate tool called directly, pointing to core_execute, and runs nothing", async () => {
    const r = await surface.dispatch("wallet__transfer", { to: "0xabc", amount: "1", asset: "USDC" }, ctx);
    expect(r.isError).toBe(true);
    expect(r.content).toContain("core_execute");
    expect(() => readFileSync(walletLog, "utf8")).toThrow();
  });

  it("validates core_execute arguments and delegates the intent", async () => {
    expect(await surface.dispatch("core_execute", { intent: "  " }, ctx)).toEqual({
      content:
        "invalid arguments for core_execute: intent: intent must be a non-empty description of the task",
      isError: true,
    });
    expect((await surface.dispatch("core_execute", {}, ctx)).isError).toBe(true);
    expect(await surface.dispatch("core_execute", { intent: "send 5 USDC to 0xabc" }, ctx)).toEqual({
      content: "planned: send 5 USDC to 0xabc",
      isError: false,
    });
    expect(intents).toEqual(["send 5 USDC to 0xabc"]);
    expect(await surface.dispatch("memory_recall", { query: "pets" }, ctx)).toEqual({
      content: 'memories about "pets"',
      isError: false,
    });
  });

  it("lets the executor run an Escalate tool through the privileged path, exactly once", async () => {
    const r = await surface.dispatchPrivileged(
      "wallet__transfer",
      { to: "0xabc", amount: "5", asset: "USDC" },
      ctx,
    );
    expect(r.isError).toBe(false);
    expect(r.content).toMatch(/tx 0x[0-9a-f]{64}/);
    const lines = readFileSync(walletLog, "utf8").trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      kind: "transfer",
      to: "0xabc",
      amount: "5",
      asset: "USDC",
    });
    expect(r.content).toContain(JSON.parse(lines[0]!).id);
    expect((await surface.dispatchPrivileged("core_execute", { intent: "x" }, ctx)).isError).toBe(true);
  });

  it("cuts results over the limit with a marker saying how much was cut", async () => {
    const r = await surface.dispatch("fs__read_text_file", { path: join(files, "big.txt") }, ctx);
    expect(r.content.slice(0, 1000)).toBe("0123456789".repeat(100));
    expect(r.content).toContain("4000 of 5000 characters cut");
  });

  it("renders server-everything's image, structured and resource results as text", async () => {
    const image = await surface.dispatch("everything__get-tiny-image", {}, ctx);
    expect(image.content).toMatch(/\[image image\/png, \d+ bytes\]/);
    const sum = await surface.dispatch("everything__get-sum", { a: 2, b: 3 }, ctx);
    expect(sum).toEqual({ content: expect.stringContaining("5"), isError: false });
    const echo = await surface.dispatch("everything__echo", { message: "hi there" }, ctx);
    expect(echo.content).toContain("hi there");
  });

  it("answers bad arguments for an MCP tool in-band (the server's own validation)", async () => {
    const r = await surface.dispatch("everything__get-sum", { a: "two" }, ctx);
    expect(r.isError).toBe(true);
  });

  it("has no tools from servers that never started, and rejects a cancelled call as a transport error", async () => {
    const names = surface.tools().map((t) => t.name);
    expect(names.some((n) => n.startsWith("broken__") || n.startsWith("missing__"))).toBe(false);
    await expect(
      surface.dispatch("wallet__get_balance", {}, { ...ctx, signal: AbortSignal.abort() }),
    ).rejects.toThrow(ToolTransportError);
  });
});

describe("tools/list_changed", () => {
  it("refreshes the tool list when the server says it changed", async () => {
    expect(await surface.dispatch("paged__grow", {}, ctx)).toEqual({
      content: "added grown_6",
      isError: false,
    });
    for (let i = 0; i < 200 && !surface.tools().some((t) => t.name === "paged__grown_6"); i++) {
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(surface.schemas().map((s) => s.function.name)).toContain("paged__grown_6");
    expect(await surface.dispatch("paged__grown_6", {}, ctx)).toEqual({
      content: "called grown_6",
      isError: false,
    });
  });
});
