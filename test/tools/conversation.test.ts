/**
 * A scripted conversation through the real loop (`createAgent` + real openai SDK against the
 * validating scripted endpoint) with the real MCP tool surface: the model reads a file with the
 * published filesystem server, calls server-everything's tools, tries the wallet's `transfer`
 * directly and is told to use core_execute, calls an unknown tool and adapts. Every request the
 * endpoint sees advertises Natural tools only.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { input, testContext, testDeps } from "../support/agent-kit.js";
import { type ScriptedRequest, startScriptedOpenAI } from "../support/scripted-openai.js";
import { everythingServer, filesystemServer, fixture, ref, tempDir } from "./helpers.js";

const dir = tempDir("conversation");
const files = join(dir, "files");
const walletLog = join(dir, "wallet.jsonl");
const intents: string[] = [];
let surface: McpToolSurface;

beforeAll(async () => {
  mkdirSync(files);
  writeFileSync(join(files, "plan.txt"), "Pay Bob 5 USDC at 0xb0b for the pizza.\n");
  surface = await createToolSurface({
    manifest: parseManifest({
      servers: {
        fs: filesystemServer(files),
        everything: everythingServer(),
        wallet: fixture("wallet", { WALLET_LOG: ref("WALLET_LOG_PATH") }),
        broken: { ...fixture("never-starts"), spawnTimeoutMs: 1000 },
      },
    }),
    env: { ...process.env, WALLET_LOG_PATH: walletLog },
    resultMaxChars: 4000,
    callTimeoutMs: 20_000,
    coreExecute: async (intent) => {
      intents.push(intent);
      return { content: "Plan shown to the user for approval: send 5 USDC to 0xb0b.", isError: false };
    },
  });
});

afterAll(async () => {
  await surface?.close();
});

function lastToolResults(req: ScriptedRequest): string[] {
  const out: string[] = [];
  for (let i = req.messages.length - 1; i >= 0 && req.messages[i]!.role === "tool"; i--) {
    out.unshift(String(req.messages[i]!.content));
  }
  return out;
}

describe("a conversation through the real loop with real MCP servers", () => {
  it("reads, calls demo tools, is refused a direct transfer and an unknown tool, and adapts", async () => {
    const escalate = surface
      .tools()
      .filter((t) => t.class === "escalate")
      .map((t) => t.name);
    expect(escalate).toEqual(["wallet__swap", "wallet__transfer"]);
    expect(surface.warnings().map((w) => w.server)).toEqual(["broken"]);
    const natural = surface.schemas().map((s) => s.function.name);

    const ep = await startScriptedOpenAI([
      {
        label: "read the plan",
        reply: { toolCalls: [{ name: "fs__read_text_file", arguments: { path: join(files, "plan.txt") } }] },
      },
      {
        label: "demo tools",
        expect: (r) => expect(lastToolResults(r)).toEqual(["Pay Bob 5 USDC at 0xb0b for the pizza.\n"]),
        reply: {
          toolCalls: [
            { name: "everything__echo", arguments: { message: "paying bob" } },
            { name: "everything__get-sum", arguments: { a: 2, b: 3 } },
          ],
        },
      },
      {
        label: "direct transfer",
        expect: (r) => {
          const [echo, sum] = lastToolResults(r);
          expect(echo).toContain("paying bob");
          expect(sum).toContain("5");
        },
        reply: {
          toolCalls: [{ name: "wallet__transfer", arguments: { to: "0xb0b", amount: "5", asset: "USDC" } }],
        },
      },
      {
        label: "unknown tool",
        expect: (r) => {
          const [refusal] = lastToolResults(r);
          expect(refusal).toContain("cannot be called directly");
          expect(refusal).toContain("core_execute");
        },
        reply: { toolCalls: [{ name: "wallet__pay_bob", arguments: {} }] },
      },
      {
        label: "adapt: core_execute",
        expect: (r) =>
          expect(lastToolResults(r)).toEqual(['unknown tool "wallet__pay_bob" — it is not available']),
        reply: {
          toolCalls: [{ name: "core_execute", arguments: { intent: "Send 5 USDC to 0xb0b (Bob, pizza)" } }],
        },
      },
      {
        label: "answer",
        expect: (r) => expect(lastToolResults(r)[0]).toContain("Plan shown to the user for approval"),
        reply: { text: "I've asked you to approve sending 5 USDC to 0xb0b." },
      },
    ]);
    try {
      const agent = createAgent(testDeps(ep, { tools: surface }));
      const ctx = testContext();
      const result = await agent.chat(
        input("Do what plan.txt says, and say hi with the demo tools first"),
        ctx,
      );
      expect(result).toMatchObject({
        status: "answered",
        text: "I've asked you to approve sending 5 USDC to 0xb0b.",
      });

      expect(ep.requests).toHaveLength(6);
      for (const req of ep.requests) {
        const names = req.tools.map((t) => t.function.name);
        expect(names).toEqual(natural);
        for (const e of escalate) expect(names).not.toContain(e);
        expect(names.slice(-1)).toEqual(["core_execute"]);
      }
      expect(intents).toEqual(["Send 5 USDC to 0xb0b (Bob, pizza)"]);
      // The direct transfer never reached the wallet.
      expect(existsSync(walletLog)).toBe(false);
    } finally {
      await ep.close();
    }
  });
});
