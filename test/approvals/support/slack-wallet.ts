/**
 * The Slack deployment for approval tests, every part real: the Slack harness (fake Slack Web API,
 * the adapter over signed HTTP, conversations, the loop against the scripted endpoint, broker,
 * access) with the MCP tool surface over the fixture wallet (which logs every execution) and
 * core_execute through the embedded executor and spend caps on the harness's store.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SpendCaps } from "../../../src/core/approvals/caps.js";
import { type CoreExecute, createCoreExecute } from "../../../src/core/approvals/core-execute.js";
import { createEmbeddedExecutor } from "../../../src/core/approvals/embedded-executor.js";
import { parseManifest } from "../../../src/core/tools/manifest.js";
import { createToolSurface } from "../../../src/core/tools/surface.js";
import type { FakeMessage } from "../../fakes/slack/fake-slack.js";
import { type Harness, type HarnessOptions, startHarness } from "../../slack/support/harness.js";
import { createLlmForTest } from "../../support/llm-for-test.js";
import type { ScriptedRequest } from "../../support/scripted-openai.js";
import { fixture, tempDir } from "../../tools/helpers.js";

export interface WalletTx {
  id: string;
  kind: string;
  amount: string;
  asset: string;
  to?: string;
}

export interface SlackWallet extends Harness {
  caps: () => SpendCaps;
  /** Every transfer or swap the wallet executed, in order. */
  walletLog(): WalletTx[];
}

export const isPlan = (r: ScriptedRequest) => r.purpose === "plan";
export const isTurn = (r: ScriptedRequest) => r.purpose !== "plan";
export const blockText = (m: FakeMessage | undefined) => JSON.stringify(m?.blocks ?? []);
export const hasButtons = (m: FakeMessage | undefined) => blockText(m).includes('"type":"actions"');

export async function startSlackWallet(
  opts: Omit<HarnessOptions, "surface"> & { walletEnv?: Record<string, string> } = {},
): Promise<SlackWallet> {
  const dir = tempDir("approvals-slack");
  const logPath = join(dir, "wallet.log");
  let caps: SpendCaps | undefined;
  const h = await startHarness({
    ...opts,
    // One dispatch per call (no transport retries), so each execution is counted exactly once.
    limits: { maxRetriesPerTool: 0, ...opts.limits },
    surface: async ({ ep, store, broker, access, caps: harnessCaps }) => {
      let coreExecute: CoreExecute | undefined;
      const surface = await createToolSurface({
        manifest: parseManifest({
          servers: { wallet: fixture("wallet", { WALLET_LOG: logPath, ...opts.walletEnv }) },
        }),
        resultMaxChars: 50_000,
        callTimeoutMs: 20_000,
        coreExecute: (intent, ctx) => coreExecute!(intent, ctx),
      });
      const executor = createEmbeddedExecutor({ llm: createLlmForTest(ep).llm, tools: surface, store });
      caps = harnessCaps;
      coreExecute = createCoreExecute({ executor, broker, caps, access });
      return surface;
    },
  });
  return {
    ...h,
    caps: () => caps!,
    walletLog: () =>
      existsSync(logPath)
        ? readFileSync(logPath, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as WalletTx)
        : [],
  };
}
