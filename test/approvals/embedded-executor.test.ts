/**
 * The embedded executor against the real fixture wallet MCP server and the real client on a
 * scripted endpoint: schema validation before a plan exists, planner retry with the errors shown,
 * in-order execution stopping at the first failure, and at-most-once execution of a plan id.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEmbeddedExecutor } from "../../src/core/approvals/embedded-executor.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { createFileStore } from "../../src/store/file-store.js";
import type { Store } from "../../src/store/types.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { fixture, tempDir, testContext } from "../tools/helpers.js";
import { alice } from "./support/plans.js";

let ep: ScriptedOpenAI;
let surface: McpToolSurface;
let store: Store;
let walletLog = "";
/** Transfers and swaps the wallet executed (its WALLET_LOG). */
const walletLines = () =>
  existsSync(walletLog) ? readFileSync(walletLog, "utf8").split("\n").filter(Boolean) : [];
afterEach(async () => {
  await surface?.close();
  await store?.close();
  await ep?.close();
});

async function setup() {
  const dir = tempDir("embedded");
  walletLog = join(dir, "wallet.log");
  ep = await startScriptedOpenAI();
  store = await createFileStore({ dataDir: join(dir, "data"), prefix: "neo:" });
  surface = await createToolSurface({
    manifest: parseManifest({ servers: { wallet: fixture("wallet", { WALLET_LOG: walletLog }) } }),
    resultMaxChars: 20_000,
    callTimeoutMs: 20_000,
  });
  const { llm } = createLlmForTest(ep);
  const reopen = async () => {
    await store.close();
    store = await createFileStore({ dataDir: join(dir, "data"), prefix: "neo:" });
    return createEmbeddedExecutor({ llm, tools: surface, store });
  };
  return Object.assign(createEmbeddedExecutor({ llm, tools: surface, store }), { reopen });
}

const transfer = (amount: unknown, asset = "USDC") => ({
  name: "wallet__transfer",
  arguments: { to: "0xabc", amount, asset },
});

describe("embedded executor", () => {
  it("off-schema arguments are shown to the planner; a corrected plan is accepted with its spend", async () => {
    const ex = await setup();
    ep.script(
      { reply: { toolCalls: [transfer(5)] } },
      {
        expect: (r) => {
          const tool = r.messages.find((m) => m.role === "tool");
          expect(String(tool?.content)).toContain("arguments.amount: must be string");
        },
        reply: { toolCalls: [transfer("5")] },
      },
    );
    const plan = await ex.plan("send 5 USDC to 0xabc", alice, testContext());
    expect(plan).toMatchObject({
      summary: "wallet__transfer 5 USDC to 0xabc",
      actions: [{ tool: "wallet__transfer", spend: { amount: "5", asset: "USDC", recipient: "0xabc" } }],
      requester: "console:local:alice",
    });
    expect(plan.id).toMatch(/^plan_/);
    expect(ep.requests.every((r) => r.purpose === "plan")).toBe(true);
  });

  it("no plan exists when the calls stay invalid or use a tool outside the Escalate set", async () => {
    const ex = await setup();
    ep.script(
      { reply: { toolCalls: [{ name: "wallet__get_balance", arguments: {} }] } },
      { reply: { toolCalls: [transfer("five")] } },
    );
    await expect(ex.plan("do it", alice, testContext())).rejects.toMatchObject({
      code: "PLAN_INVALID",
      message: expect.stringContaining("arguments.amount: must match pattern"),
    });
    expect(await store.keys("approvals:plan:")).toEqual([]);
  });

  it("a planner that proposes nothing gives a clear error", async () => {
    const ex = await setup();
    ep.script({ reply: { text: "I cannot bridge to that chain." } });
    await expect(ex.plan("bridge", alice, testContext())).rejects.toThrow(
      "no plan: I cannot bridge to that chain.",
    );
  });

  it("runs in order, stops at the first failure, reports what did not run; a plan runs at most once", async () => {
    const ex = await setup();
    ep.script({
      reply: {
        toolCalls: [
          transfer("1"),
          transfer("5000"),
          { name: "wallet__swap", arguments: { amount: "1", from: "ETH", to: "USDC" } },
        ],
      },
    });
    const plan = await ex.plan("three things", alice, testContext());
    const outcome = await ex.execute(plan, testContext());
    expect(outcome.status).toBe("partial");
    expect(outcome.results.map((r) => [r.tool, r.isError])).toEqual([
      ["wallet__transfer", false],
      ["wallet__transfer", true],
    ]);
    expect(outcome.results[1]!.content).toContain("insufficient USDC");
    expect(outcome.notRun.map((a) => a.tool)).toEqual(["wallet__swap"]);
    expect(outcome.txIds).toHaveLength(1);
    expect(outcome.results[0]!.content).toContain(outcome.txIds[0]!);
    await expect(ex.execute(plan, testContext())).rejects.toMatchObject({ code: "PLAN_NOT_FOUND" });
  });

  it("a plan survives a restart: a new executor over the reopened store runs it once", async () => {
    const ex = await setup();
    ep.script({ reply: { toolCalls: [transfer("2")] } });
    const plan = await ex.plan("send 2", alice, testContext());
    const after = await ex.reopen();
    const outcome = await after.execute(plan, testContext());
    expect(outcome.status).toBe("success");
    expect(outcome.results[0]!.content).toContain("sent 2 USDC to 0xabc");
    await expect(after.execute(plan, testContext())).rejects.toMatchObject({ code: "PLAN_NOT_FOUND" });
  });

  it("runs only the plan that was approved: a plan differing from the stored one by one byte runs nothing", async () => {
    const ex = await setup();
    ep.script({ reply: { toolCalls: [transfer("2")] } });
    const plan = await ex.plan("send 2", alice, testContext());
    const action = plan.actions[0]!;
    const other = { ...plan, actions: [{ ...action, arguments: { ...action.arguments, amount: "20" } }] };
    await expect(ex.execute(other, testContext())).rejects.toMatchObject({ code: "PLAN_MISMATCH" });
    expect(walletLines()).toEqual([]);
    expect((await ex.execute(plan, testContext())).status).toBe("success");
  });
});
