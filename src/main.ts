/**
 * Wiring only: config → model client → tools → memory → adapters. With no platform token this
 * starts the console chat.
 */
import { runConsole } from "./adapters/console/run-console.js";
import { ConfigError, loadConfig, secretsOf } from "./config.js";
import { limitsFromConfig } from "./core/agent/limits.js";
import { NO_MEMORY } from "./core/agent/no-memory.js";
import { createLlmClient } from "./core/llm/client.js";
import { createUsageLedger, pricesFromConfig } from "./core/llm/usage-ledger.js";
import { registerSecrets, setLogLevel, setLogSink } from "./core/log.js";
import { emptyToolSurface } from "./core/tools/empty-surface.js";

/** Until the console approval channel is wired, nothing can be approved (and no tool asks). */
const unwiredApprovals = () => ({
  present: async () => undefined,
  update: async () => {},
});

async function main(): Promise<number> {
  let cfg: ReturnType<typeof loadConfig>;
  try {
    cfg = loadConfig();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`${e.message}\n`);
    return 1;
  }
  registerSecrets(secretsOf(cfg));
  if (!cfg.OPENAI_BASE_URL && !cfg.OPENAI_API_KEY) {
    process.stderr.write(
      "OPENAI_API_KEY: set it to use OpenAI, or set OPENAI_BASE_URL to a local OpenAI-compatible server (Ollama, vLLM)\n",
    );
    return 1;
  }
  const platform = cfg.DISCORD_TOKEN ? "DISCORD_TOKEN" : cfg.SLACK_BOT_TOKEN ? "SLACK_BOT_TOKEN" : null;
  if (platform) {
    process.stderr.write(`${platform}: is set, but that adapter is not wired into src/main.ts yet\n`);
    return 1;
  }

  // The console owns stdout for answers: logs go to stderr, quiet unless asked for.
  setLogSink((line) => process.stderr.write(line));
  setLogLevel(process.env.NEO_LOG_LEVEL ? cfg.NEO_LOG_LEVEL : "warn");
  const llm = createLlmClient(cfg, createUsageLedger(pricesFromConfig(cfg)));
  const deps = { llm, tools: emptyToolSurface, memory: NO_MEMORY, limits: limitsFromConfig(cfg) };
  await runConsole({
    deps,
    approvals: unwiredApprovals,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    banner: `Neo (${cfg.NEO_MAIN_MODEL}${cfg.NEO_CHEAP_MODEL ? ` + ${cfg.NEO_CHEAP_MODEL}` : ""}). Type a message. Ctrl-C cancels a turn; Ctrl-C when idle exits.`,
  });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`neo: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
