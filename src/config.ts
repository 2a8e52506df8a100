/**
 * Every setting comes from the environment and is validated here, once, at start-up.
 * A bad value stops start-up with one line naming the variable and what it expects.
 */
import { z } from "zod";

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const pct = z.coerce.number().int().min(1).max(100);
const csv = z.string().transform((s) =>
  s
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean),
);
const optionalUrl = z.url().optional();

/** The environment schema. Each key is the variable's name; defaults are the seed's numbers. */
export const envSchema = z.object({
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: optionalUrl,
  NEO_MAIN_MODEL: z.string().min(1).default("gpt-4o"),
  /** Unset = the cheap role uses the main model. */
  NEO_CHEAP_MODEL: z.string().min(1).optional(),
  NEO_CONTEXT_WINDOW: int(1024).default(128_000),
  /** Max completion tokens per main-model call. */
  NEO_MAX_OUTPUT_TOKENS: int(16).default(4096),
  /** USD per million tokens, for the usage ledger ("input,output"; both models unless overridden). */
  NEO_MAIN_PRICE: z
    .string()
    .regex(/^\d+(\.\d+)?,\d+(\.\d+)?$/, "expected 'input,output' USD per 1M tokens")
    .optional(),
  NEO_CHEAP_PRICE: z
    .string()
    .regex(/^\d+(\.\d+)?,\d+(\.\d+)?$/, "expected 'input,output' USD per 1M tokens")
    .optional(),

  /** SDK retries per model call (408/409/429/5xx, connection); the only retry layer for model calls. */
  NEO_LLM_MAX_RETRIES: int(0, 10).default(2),
  /** Per-attempt timeout of a model call. */
  NEO_LLM_TIMEOUT_MS: int(1000).default(120_000),

  NEO_SOFT_PCT: pct.default(80),
  NEO_HARD_PCT: pct.default(92),
  NEO_STEP_BUDGET: int(1).default(40),
  NEO_NO_PROGRESS_STALL: int(1).default(3),
  NEO_REFAULT_EVERY: int(1).default(6),
  NEO_MAX_RETRIES_PER_TOOL: int(0).default(3),
  NEO_MAX_ADAPT_ATTEMPTS: int(0).default(2),
  NEO_RECALL_TURNS: int(0).default(16),

  NEO_MCP_MANIFEST: z.string().min(1).default("agents/default.json"),
  /** Tool results above this many characters are cut, with a marker saying how much. */
  NEO_TOOL_RESULT_MAX_CHARS: int(256).default(20_000),
  NEO_TOOL_TIMEOUT_MS: int(100).default(60_000),

  REDIS_URL: optionalUrl,
  NEO_DATA_DIR: z.string().min(1).default("./data"),
  NEO_KEY_PREFIX: z.string().default("neo:"),

  DISCORD_TOKEN: z.string().min(1).optional(),
  DISCORD_APP_ID: z.string().min(1).optional(),
  DISCORD_API_URL: optionalUrl,
  DISCORD_GUILD_ID: z.string().min(1).optional(),

  SLACK_BOT_TOKEN: z.string().min(1).optional(),
  SLACK_SIGNING_SECRET: z.string().min(1).optional(),
  SLACK_APP_TOKEN: z.string().min(1).optional(),
  SLACK_API_URL: optionalUrl,

  NEO_HTTP_PORT: int(0, 65535).default(3000),
  NEO_ADMIN_USER_IDS: csv.default([]),
  NEO_EXECUTOR_URL: optionalUrl,
  /** Remote executor: timeout of one HTTP request, retries after a transient failure, poll interval. */
  NEO_EXECUTOR_TIMEOUT_MS: int(100).default(10_000),
  NEO_EXECUTOR_RETRIES: int(0, 10).default(2),
  NEO_EXECUTOR_POLL_MS: int(10).default(1000),
  /** Remote executor: how long planning, and execution after approval, may take. */
  NEO_EXECUTOR_PLAN_TIMEOUT_MS: int(1000).default(120_000),
  NEO_EXECUTOR_EXECUTE_TIMEOUT_MS: int(1000).default(300_000),
  NEO_APPROVAL_TTL_SECONDS: int(10).default(600),
  /** How often a waiting core_execute reads the store for a click taken on another instance. */
  NEO_APPROVAL_POLL_MS: int(10).default(500),
  NEO_MAX_CONCURRENT_TURNS: int(1).default(8),
  NEO_SHUTDOWN_GRACE_MS: int(0).default(10_000),
  /** Unique per running instance, stable across its restarts (unset = the host name). */
  NEO_INSTANCE_ID: z.string().min(1).optional(),
  /** Per-conversation lease while an instance runs it; renewed every third; taken over after expiry. */
  NEO_LEASE_MS: int(1000).default(30_000),
  /** An idle conversation's agent leaves memory after this long (its transcript stays stored). */
  NEO_IDLE_EVICT_MS: int(1000).default(600_000),
  /** How long a platform message/event id is remembered to drop retried deliveries. */
  NEO_DEDUPE_TTL_MS: int(1000).default(86_400_000),
  /** Optional per-user daily token budget; unset = unlimited. */
  NEO_USER_DAILY_TOKENS: int(1).optional(),
  /** Escalate-class name patterns; unset = the seed's defaults. */
  NEO_ESCALATE_PATTERNS: csv.optional(),

  NEO_LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
});

export type Config = z.infer<typeof envSchema>;

export class ConfigError extends Error {
  readonly code = "CONFIG";
}

/** Parse the environment. Throws `ConfigError` whose message is one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings (`FOO=` in a .env) mean "unset", as every dotenv user expects.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? "environment");
    const got = cleaned[name];
    const secret = /TOKEN|KEY|SECRET/.test(name);
    const shown = got === undefined ? "it is missing" : secret ? "the value given" : `got "${got}"`;
    throw new ConfigError(`${name}: ${issue.message} (${shown})`);
  }
  const cfg = parsed.data;
  if (cfg.NEO_SOFT_PCT >= cfg.NEO_HARD_PCT) {
    throw new ConfigError(
      `NEO_SOFT_PCT: must be below NEO_HARD_PCT (${cfg.NEO_SOFT_PCT} >= ${cfg.NEO_HARD_PCT})`,
    );
  }
  return cfg;
}

/** Values that must never appear in logs or messages. */
export function secretsOf(cfg: Config): string[] {
  return [
    cfg.OPENAI_API_KEY,
    cfg.DISCORD_TOKEN,
    cfg.SLACK_BOT_TOKEN,
    cfg.SLACK_SIGNING_SECRET,
    cfg.SLACK_APP_TOKEN,
  ].filter((s): s is string => typeof s === "string" && s.length > 0);
}
