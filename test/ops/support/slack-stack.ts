/**
 * The Slack deployment shape for observability tests, every part real: the Slack test harness
 * (fake Slack Web API, Neo's Slack adapter over signed HTTP, conversations, the agent loop and openai
 * SDK against the scripted endpoint, broker, access) with the MCP tool surface over the fixture
 * wallet and crasher servers and core_execute through the embedded executor and spend caps.
 */
import { join } from "node:path";
import { createSpendCaps } from "../../../src/core/approvals/caps.js";
import { type CoreExecute, createCoreExecute } from "../../../src/core/approvals/core-execute.js";
import { createEmbeddedExecutor } from "../../../src/core/approvals/embedded-executor.js";
import { parseManifest } from "../../../src/core/tools/manifest.js";
import { createToolSurface } from "../../../src/core/tools/surface.js";
import { type Harness, startHarness } from "../../slack/support/harness.js";
import { createLlmForTest } from "../../support/llm-for-test.js";
import { fixture, tempDir } from "../../tools/helpers.js";

export type SlackStack = Harness;

export function startSlackStack(): Promise<SlackStack> {
  const dir = tempDir("ops-slack");
  return startHarness({
    maxConcurrentTurns: 4,
    // One dispatch per call (no transport retries), so each call is counted exactly once.
    limits: { maxRetriesPerTool: 0 },
    surface: async ({ ep, store, broker, access }) => {
      let coreExecute: CoreExecute | undefined;
      const surface = await createToolSurface({
        manifest: parseManifest({
          servers: {
            wallet: fixture("wallet", { WALLET_LOG: join(dir, "wallet.log") }),
            crasher: fixture("crasher"),
          },
        }),
        resultMaxChars: 20_000,
        callTimeoutMs: 20_000,
        coreExecute: (intent, ctx) => coreExecute!(intent, ctx),
      });
      const executor = createEmbeddedExecutor({ llm: createLlmForTest(ep).llm, tools: surface, store });
      coreExecute = createCoreExecute({ executor, broker, caps: createSpendCaps({ store }), access });
      return surface;
    },
  });
}
