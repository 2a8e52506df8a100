/**
 * Entry point. Wiring only: config → services (store, models, cortex, tools, approvals) → the
 * Slack and/or Discord adapters when their tokens are set, else the console chat. SIGTERM/SIGINT
 * stop taking work, let running turns reach a cancellation point (the next start resumes them),
 * drain write-back, close the store and exit 0.
 */
import { fstatSync } from "node:fs";
import { isatty } from "node:tty";
import { runConsoleMode } from "./app/console.js";
import { type ProcessPlace, processPlaceOf } from "./app/process-place.js";
import { startServer } from "./app/server.js";
import { createServices, type Services } from "./app/services.js";
import { type Config, ConfigError, loadConfig, loadEnvFile, secretsOf, urlsOf } from "./config.js";
import { log, redact, registerSecrets, setLogLevel, setLogSink } from "./core/log.js";
import { urlSecrets } from "./ops/redact.js";
import { startTracing } from "./ops/tracing/setup.js";

/** How long shutdown waits for write-back and the store after the turns have stopped. */
const CLOSE_GRACE_MS = 5_000;

/** One line on stderr, naming what to fix. */
function fail(message: string): number {
  process.stderr.write(`${redact(message)}\n`);
  return 1;
}

function withDeadline(p: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([p, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
}

async function serve(s: Services): Promise<number> {
  const server = await startServer(s);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  // A second signal while draining means "now".
  const force = () => process.exit(1);
  process.once("SIGTERM", force);
  process.once("SIGINT", force);
  log.info({ signal }, "shutting down");
  await server.stop();
  log.info("stopped taking work; closing");
  return 0;
}

/**
 * Whether someone can type to the console chat: a terminal, a pipe or a file, not /dev/null (what
 * a container or a service manager gives a process nobody talks to).
 */
function stdinCanChat(): boolean {
  try {
    return isatty(0) || !fstatSync(0).isCharacterDevice();
  } catch {
    return false;
  }
}

async function main(): Promise<number> {
  let cfg: Config;
  let place: ProcessPlace;
  try {
    loadEnvFile();
    cfg = loadConfig();
    place = processPlaceOf(cfg);
  } catch (e) {
    if (e instanceof ConfigError) return fail(e.message);
    throw e;
  }
  registerSecrets([...secretsOf(cfg), ...urlsOf(cfg).flatMap(urlSecrets)]);
  if (!cfg.OPENAI_BASE_URL && !cfg.OPENAI_API_KEY) {
    return fail(
      "OPENAI_API_KEY: set it to use OpenAI, or set OPENAI_BASE_URL to a local OpenAI-compatible server (Ollama, vLLM)",
    );
  }
  const consoleMode = !cfg.SLACK_BOT_TOKEN && !cfg.SLACK_CLIENT_ID && !cfg.DISCORD_TOKEN;
  if (consoleMode && !stdinCanChat()) {
    // Started as a service with no platform configured: say so and fail, so a supervisor shows it.
    return fail(
      "SLACK_BOT_TOKEN / DISCORD_TOKEN: neither is set, and the console chat needs someone to type (stdin is not a terminal); set a platform token",
    );
  }
  if (consoleMode) {
    // The console owns stdout for answers: logs go to stderr, quiet unless asked for.
    setLogSink((line) => process.stderr.write(line));
    setLogLevel(cfg.NEO_LOG_LEVEL ?? "warn");
  } else {
    setLogLevel(cfg.NEO_LOG_LEVEL ?? "info");
  }
  // Before anything makes a span; unset OTEL_EXPORTER_OTLP_ENDPOINT loads no SDK.
  const tracing = await startTracing(cfg, place.instanceId);
  const services = await createServices(cfg, place);
  try {
    if (consoleMode) {
      await runConsoleMode(services);
      return 0;
    }
    return await serve(services);
  } finally {
    await withDeadline(services.close(), CLOSE_GRACE_MS);
    // The last turns' spans are sent before exit.
    await withDeadline(tracing.shutdown(), CLOSE_GRACE_MS);
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    // Start-up errors (manifest, Slack auth, Discord login) are said once: one line on stderr.
    process.exitCode = fail(`neo: ${e instanceof Error ? e.message : String(e)}`);
    process.exit();
  },
);
