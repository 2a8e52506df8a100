/**
 * Everything real for an end-to-end core_execute test: the scripted OpenAI endpoint and the real
 * client, the real MCP tool surface over the fixture wallet (and optionally server-everything), the
 * embedded executor, the broker on the file store, caps, access, the console approval channel fed
 * from a stream, and the real agent loop.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import {
  askFromStream,
  createConsoleApprovalChannel,
} from "../../../src/adapters/console/approval-channel.js";
import { createAdminCheck } from "../../../src/core/access/admin.js";
import { createAccessPolicy } from "../../../src/core/access/policy.js";
import { createAgent } from "../../../src/core/agent/agent.js";
import { createAuditLog } from "../../../src/core/approvals/audit.js";
import { createApprovalBroker } from "../../../src/core/approvals/broker.js";
import { createSpendCaps } from "../../../src/core/approvals/caps.js";
import { type CoreExecute, createCoreExecute } from "../../../src/core/approvals/core-execute.js";
import { createEmbeddedExecutor } from "../../../src/core/approvals/embedded-executor.js";
import type { ApprovalChannel } from "../../../src/core/approvals/types.js";
import { parseManifest } from "../../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../../src/core/tools/surface.js";
import { createFileStore } from "../../../src/store/file-store.js";
import type { Store } from "../../../src/store/types.js";
import { ann, recordingMemory, testContext, testLimits } from "../../support/agent-kit.js";
import { createLlmForTest } from "../../support/llm-for-test.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../../support/scripted-openai.js";
import { everythingServer, fixture, tempDir } from "../../tools/helpers.js";

export interface Harness {
  ep: ScriptedOpenAI;
  store: Store;
  surface: McpToolSurface;
  broker: ReturnType<typeof createApprovalBroker>;
  caps: ReturnType<typeof createSpendCaps>;
  access: ReturnType<typeof createAccessPolicy>;
  agent: ReturnType<typeof createAgent>;
  /** Type an answer at the console prompt. */
  answer(line: string): void;
  /** What the console printed (plan, prompt, results). */
  consoleOutput(): string;
  channel: ApprovalChannel;
  /** Executed wallet transactions (WALLET_LOG lines). */
  walletLog(): Array<{ id: string; kind: string; amount: string; asset: string; to?: string }>;
  close(): Promise<void>;
}

export async function startHarness(
  opts: { ttlMs?: number; everything?: boolean; channel?: ApprovalChannel } = {},
) {
  const dir = tempDir("approvals-e2e");
  const walletLogPath = join(dir, "wallet.log");
  const ep = await startScriptedOpenAI();
  const { llm } = createLlmForTest(ep);
  const store = await createFileStore({ dataDir: join(dir, "data"), prefix: "neo:" });
  const audit = createAuditLog(store);
  const caps = createSpendCaps({ store });
  const broker = createApprovalBroker({
    instanceId: "test-instance",
    store,
    audit,
    ttlMs: opts.ttlMs ?? 60_000,
    pollMs: 20,
    caps,
  });
  const access = createAccessPolicy({ store, isAdmin: createAdminCheck([]) });
  let coreExecute: CoreExecute | undefined;
  const surface = await createToolSurface({
    manifest: parseManifest({
      servers: {
        wallet: fixture("wallet", { WALLET_LOG: walletLogPath }),
        ...(opts.everything ? { everything: everythingServer() } : {}),
      },
    }),
    resultMaxChars: 20_000,
    callTimeoutMs: 20_000,
    coreExecute: (intent, ctx) => coreExecute!(intent, ctx),
  });
  const executor = createEmbeddedExecutor({ llm, tools: surface, store });
  coreExecute = createCoreExecute({ executor, broker, caps, access });

  const input = new PassThrough();
  const output = new PassThrough();
  let printed = "";
  output.on("data", (d: Buffer) => {
    printed += d.toString();
  });
  const channel =
    opts.channel ??
    createConsoleApprovalChannel({
      decide: broker.decide,
      userKey: ann.userKey,
      ask: askFromStream(input, output),
      write: (t) => output.write(t),
    });
  const agent = createAgent({ llm, tools: surface, memory: recordingMemory(), limits: testLimits() });

  return {
    ep,
    store,
    surface,
    broker,
    caps,
    access,
    agent,
    channel,
    answer: (line: string) => input.write(`${line}\n`),
    consoleOutput: () => printed,
    walletLog: () =>
      existsSync(walletLogPath)
        ? readFileSync(walletLogPath, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { id: string; kind: string; amount: string; asset: string })
        : [],
    close: async () => {
      input.end();
      await surface.close();
      await store.close();
      await ep.close();
    },
  } satisfies Harness;
}

export function turnContext(h: { channel: ApprovalChannel }) {
  return testContext({ approvals: h.channel, conversation: "console:local:tty:wallet" });
}
