/**
 * Every setting comes from the environment and is validated here, once, at start-up.
 * A bad value stops start-up with one line naming the variable and what it expects.
 *
 * Each variable carries its description; `docs/configuration.md` is generated from this file
 * (`npm run docs:config`) and a test fails when it is stale.
 */
import { existsSync } from "node:fs";
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
const usd = z.coerce.number().positive();
const PRICE_ENTRY = String.raw`[^=;\s]+=\d+(\.\d+)?,\d+(\.\d+)?(,\d+(\.\d+)?)?`;
/**
 * `model=input,output[,cached];…` (USD per million tokens) → prices by model name. The optional third
 * price is for input tokens the provider read from its prompt cache.
 */
const prices = z
  .string()
  .regex(
    new RegExp(`^${PRICE_ENTRY}(;${PRICE_ENTRY})*$`),
    "expected 'model=input,output[,cached]' entries separated by ';' (USD per 1M tokens), e.g. 'gpt-4o=2.5,10,1.25;gpt-4o-mini=0.15,0.6'",
  )
  .transform((s) =>
    Object.fromEntries(
      s.split(";").map((entry) => {
        const [model, spec] = entry.split("=") as [string, string];
        const [input, output, cached] = spec.split(",").map(Number) as [number, number, number?];
        return [model, { input, output, ...(cached === undefined ? {} : { cached }) }];
      }),
    ),
  );

/** The model endpoint and the two models. */
const modelEnv = z.object({
  OPENAI_API_KEY: z
    .string()
    .optional()
    .describe("API key of the model endpoint. A local server (Ollama, vLLM) may need none."),
  OPENAI_BASE_URL: optionalUrl.describe(
    "Any OpenAI-compatible API, e.g. `http://127.0.0.1:11434/v1` (Ollama); unset = api.openai.com. One of this and `OPENAI_API_KEY` must be set.",
  ),
  NEO_MAIN_MODEL: z.string().min(1).default("gpt-4o").describe("The model that runs the loop."),
  NEO_CHEAP_MODEL: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The model for compaction summaries and memory write-back; unset = the main model. A failed cheap call falls back to the main model.",
    ),
  NEO_CONTEXT_WINDOW: int(1024)
    .default(128_000)
    .describe("The main model's context window in tokens; compaction thresholds are percentages of it."),
  NEO_MAX_OUTPUT_TOKENS: int(16).default(4096).describe("Max completion tokens per main-model call."),
  NEO_MODEL_PRICES: prices
    .optional()
    .describe(
      "USD per million tokens by model, `model=input,output[,cached]` entries separated by `;` (e.g. `gpt-4o=2.5,10,1.25;gpt-4o-mini=0.15,0.6,0.075`); the optional third price is for input tokens the provider read from its prompt cache (`usage.prompt_tokens_details.cached_tokens`; unset = the input price). Every model a budget applies to needs one. Unset = cost not computed.",
    ),
  NEO_LLM_MAX_RETRIES: int(0, 10)
    .default(2)
    .describe(
      "openai SDK retries per model call (408/409/429/5xx, connection errors); the only retry layer for model calls.",
    ),
  NEO_LLM_TIMEOUT_MS: int(1000).default(120_000).describe("Timeout of one model request attempt."),
  NEO_MAIN_MODEL_VISION: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .describe(
      "`true` when the main model reads images: attached PNG, JPEG, GIF and WebP files are sent to it as image parts. `false`: images are named only, and the user is told once.",
    ),
});

/** Files attached to messages. */
const filesEnv = z.object({
  NEO_FILE_MAX_BYTES: int(1)
    .default(20 * 1024 * 1024)
    .describe(
      "Largest attached file Neo downloads, in bytes (default 20 MB); a larger one is refused with a message.",
    ),
  NEO_FILES_PER_MESSAGE: int(0)
    .default(5)
    .describe("Attached files read per message; the rest are named and the user is told."),
  NEO_FILE_TEXT_TOKENS: int(100)
    .default(8000)
    .describe(
      "Tokens of text kept from one text-like file or PDF, counted by the real tokenizer (o200k, as an upper bound for every script); the rest is cut with a marker and the user told.",
    ),
  NEO_FILE_MESSAGE_TOKENS: int(100)
    .default(24_000)
    .describe(
      "Tokens of text kept from all the files of one message together (and never more than 30 % of `NEO_CONTEXT_WINDOW` for the files in the window); files past it are cut or not read, and the user told.",
    ),
  NEO_FILE_WORKERS: int(1, 64)
    .default(2)
    .describe(
      "Worker threads that read files (PDFs, images, text); a file waits for a free one. The main thread never parses a file.",
    ),
  NEO_FILE_READ_MS: int(100)
    .default(20_000)
    .describe(
      "Wall time for reading one file in its worker; a worker over it is stopped and the user told the file is too complex to read.",
    ),
  NEO_FILE_READ_MB: int(32)
    .default(256)
    .describe(
      "Heap of one file reader worker, in MB (`resourceLimits`); a worker over it is stopped and the user told the file is too complex to read.",
    ),
  NEO_FILE_PDF_PAGES: int(1)
    .default(500)
    .describe("PDF pages read at most; the user is told when a document has more."),
  NEO_FILE_PDF_OBJECTS: int(100)
    .default(200_000)
    .describe(
      "PDF objects a document may declare; one with more is refused as too complex before it is parsed.",
    ),
  NEO_FILE_IMAGE_PIXELS: int(1)
    .default(50_000_000)
    .describe(
      "Pixels (width × height) an image may declare; a larger one is refused before it is decoded. Images within it are downscaled to the model's limits (fit 2048 × 2048, short side 768 px).",
    ),
  NEO_ANSWER_FILE_CHARS: int(0)
    .default(8000)
    .describe(
      "An answer longer than this many characters (about four Discord messages) is uploaded as answer.md in the thread, with its beginning as the message; 0 = never.",
    ),
  NEO_ANSWER_FILE_CODE_LINES: int(0)
    .default(60)
    .describe(
      "A code block in an answer longer than this many lines is uploaded as a file with its language's extension, and the answer names it in its place; 0 = never.",
    ),
});

/** The agent loop; the defaults are the seed's numbers. */
const loopEnv = z.object({
  NEO_BOT_NAME: z
    .string()
    .min(1)
    .default("Neo")
    .describe("The name the model is told it has (the identity line of the pinned block)."),
  NEO_DEPLOYMENT: z
    .string()
    .min(1)
    .optional()
    .describe("This deployment's name (e.g. `acme-prod`), told to the model with its name; unset = none."),
  NEO_SOFT_PCT: pct
    .default(80)
    .describe("Context use (% of the window) at which the transcript is compacted after an answer."),
  NEO_HARD_PCT: pct
    .default(92)
    .describe("Context use at which the transcript is compacted before the next model call."),
  NEO_STEP_BUDGET: int(1).default(40).describe("Model calls per turn before it ends with an honest partial."),
  NEO_NO_PROGRESS_STALL: int(1)
    .default(3)
    .describe(
      "The same tool calls returning the same results this many times in a row end the turn as stalled (a poll whose result changes is progress).",
    ),
  NEO_REFAULT_EVERY: int(1).default(6).describe("Steps between re-reads of the user's memory during a turn."),
  NEO_MAX_RETRIES_PER_TOOL: int(0)
    .default(3)
    .describe("Retries, with backoff, of a tool call that failed in transport."),
  NEO_MAX_ADAPT_ATTEMPTS: int(0)
    .default(2)
    .describe(
      "Further attempts the model gets after a tool returned errors (a batch of calls is one attempt) before the turn ends with an honest partial.",
    ),
  NEO_SUMMARY_PCT: pct
    .default(20)
    .describe(
      "Cap of the consolidated summary, in % of the window: the summarizer writes at most half of it; identifiers it left out fill the rest, newest first, and older ones move out (still found with `conversation_lookup`).",
    ),
  NEO_RECALL_TURNS: int(0)
    .default(16)
    .describe(
      "Past turns recalled from memory per model call; also the user turns a conversation rebuilt from the store keeps.",
    ),
  NEO_WRITEBACK_CONCURRENCY: int(1)
    .optional()
    .describe(
      "Cheap-model write-back calls running at once for the whole bot, users served in turn; unset = `NEO_MAX_CONCURRENT_TURNS`, a slot for each turn that can end at once. A user's call takes all their waiting turns, of every conversation (each conversation's records keep its place), so calls follow the users finishing turns, not their messages. At most 8 of a user's turns wait (the seed's depth); a full queue gets another call if a slot is free, else only that user's next turns are dropped (`neo_writeback_dropped_total`).",
    ),
});

/** Tools (MCP servers). */
const toolsEnv = z.object({
  NEO_MCP_MANIFEST: z
    .string()
    .min(1)
    .default("agents/default.json")
    .describe("The agent manifest: MCP servers and escalate patterns (see [tools](tools.md))."),
  NEO_TOOL_RESULT_MAX_CHARS: int(256)
    .default(20_000)
    .describe("Tool results above this many characters are cut, with a marker saying how much."),
  NEO_TOOL_TIMEOUT_MS: int(100).default(60_000).describe("Timeout of one tool call."),
  NEO_TOOL_USER_IDLE_MS: int(1000)
    .default(600_000)
    .describe(
      "A user's own process of a per-user tool server (manifest `scope: user`, e.g. the default filesystem tool) is stopped after this long without a call; the next call starts it again.",
    ),
  NEO_TOOL_USER_MAX_PROCESSES: int(1)
    .default(32)
    .describe(
      "Most users' processes of one per-user tool server running at once. A new user's call stops the least recently used idle one; when all are busy, it waits for one to finish (cancelled with its turn).",
    ),
  NEO_ESCALATE_PATTERNS: csv
    .optional()
    .describe(
      "Comma-separated escalate-class name patterns; unset = the manifest's, else `send,transfer,swap,approve,deploy,settle,fund,mint,withdraw,stake,invoke,bridge`.",
    ),
});

/** Where durable state lives. */
const storageEnv = z.object({
  REDIS_URL: z
    .string()
    .refine((v) => v.split(",").every((u) => z.url().safeParse(u.trim()).success), {
      message: "must be a URL (with REDIS_CLUSTER=true, comma-separated URLs)",
    })
    .optional()
    .describe(
      "Redis store (several instances may share it); unset = the embedded file store under `NEO_DATA_DIR`. With `REDIS_CLUSTER=true`, the cluster's seed nodes, comma-separated (`redis://a:6379,redis://b:6379`).",
    ),
  REDIS_CLUSTER: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .describe(
      "`true`: `REDIS_URL` names a Redis Cluster (its seed nodes); every key of a conversation, user or approval shares a hash slot.",
    ),
  NEO_DATA_DIR: z
    .string()
    .min(1)
    .default("./data")
    .describe(
      "The embedded store's directory (one process per directory); per-user tool folders are under `users/` (the default filesystem tool's root is `users/<user>/files`).",
    ),
  NEO_KEY_PREFIX: z.string().default("neo:").describe("Prefix of every store key."),
  NEO_CONVERSATION_RETENTION_DAYS: z.coerce
    .number()
    .positive()
    .default(30)
    .describe(
      "A conversation idle longer than this (days; decimals allowed) is deleted: transcript, inbox, journal and leases. A later message in its thread starts it over, reading the thread as on a first mention.",
    ),
  NEO_AUDIT_RETENTION_DAYS: z.coerce
    .number()
    .positive()
    .default(365)
    .describe(
      "Approval records and approvals audit entries are kept this long (days; decimals allowed), then dropped (records by TTL, audit entries from the log's front once a day). Usage is kept as counters only: per UTC day for 35 days and per UTC month for 13 months.",
    ),
  NEO_MEMORY_RETENTION_DAYS: z.coerce
    .number()
    .positive()
    .optional()
    .describe(
      "Unset = what Neo remembers about a person (the cortex) is kept until they forget it. Set (days; decimals allowed) = a record or recalled exchange not learned, reinforced or edited for this long is dropped, and a person Neo has not learned anything from for this long loses their whole cortex.",
    ),
});

const discordEnv = z.object({
  DISCORD_TOKEN: z.string().min(1).optional().describe("Bot token; setting it starts the Discord adapter."),
  DISCORD_APP_ID: z.string().min(1).optional().describe("Application id, for `npm run register:discord`."),
  DISCORD_API_URL: optionalUrl.describe(
    "REST API base for proxies and local fakes; unset = `https://discord.com/api`.",
  ),
  DISCORD_GUILD_ID: z
    .string()
    .min(1)
    .optional()
    .describe("`register:discord` registers the commands in this server only (instant); unset = globally."),
});

const slackEnv = z.object({
  SLACK_BOT_TOKEN: z
    .string()
    .min(1)
    .optional()
    .describe("Bot token (`xoxb-…`); setting it starts the Slack adapter."),
  SLACK_SIGNING_SECRET: z.string().min(1).optional().describe("Signing secret; needed in HTTP mode."),
  SLACK_APP_TOKEN: z
    .string()
    .min(1)
    .optional()
    .describe("App-level token (`xapp-…`); setting it selects Socket Mode instead of HTTP."),
  SLACK_API_URL: optionalUrl.describe(
    "Web API base (every method, `oauth.v2.access` included) for proxies and local fakes; unset = `https://slack.com/api/`.",
  ),
  SLACK_CLIENT_ID: z
    .string()
    .min(1)
    .optional()
    .describe(
      "OAuth install for many workspaces (with the next two, in HTTP mode, instead of `SLACK_BOT_TOKEN`): the app's Client ID. Serves `/slack/install` and `/slack/oauth_redirect` on `NEO_HTTP_PORT`.",
    ),
  SLACK_CLIENT_SECRET: z.string().min(1).optional().describe("OAuth install: the app's Client Secret."),
  SLACK_STATE_SECRET: z
    .string()
    .min(1)
    .optional()
    .describe("OAuth install: any long random string; signs the install's `state` parameter."),
  NEO_SLACK_ASSISTANT_GREETING: z
    .string()
    .min(1)
    .max(3000)
    .default("Hi, I'm Neo. Ask me anything: I can use tools, and I remember what you tell me.")
    .describe("Slack assistant panel: what Neo says when a thread starts."),
  NEO_SLACK_ASSISTANT_PROMPTS: z
    .string()
    .default(
      JSON.stringify([
        {
          title: "Summarise this channel",
          message: "Summarise what happened in the channel I'm looking at.",
        },
        { title: "What can you do?", message: "What can you do, and which tools do you have?" },
        { title: "What do you remember?", message: "What do you remember about me?" },
      ]),
    )
    .transform(parseJson)
    .pipe(
      z
        .array(z.object({ title: z.string().min(1).max(75), message: z.string().min(1).max(2000) }).strict())
        .max(4, "Slack shows at most four suggested prompts"),
    )
    .describe(
      'Slack assistant panel: the suggested prompts offered under the greeting, a JSON array of at most four `{"title": …, "message": …}` (`[]` = none).',
    ),
});

/** The HTTP port, access, approvals and the executor. */
const serverEnv = z.object({
  NEO_HTTP_PORT: int(0, 65535)
    .default(3000)
    .describe(
      "Slack's HTTP receiver (`/slack/events`) and `/healthz` (never `/metrics`). With `SHARDS` set (discord.js `ShardingManager`), plus the process's first shard id.",
    ),
  NEO_PUBLIC_URL: optionalUrl.describe(
    'Neo\'s public base URL; OAuth sign-ins to `"auth": "oauth"` MCP servers come back to `/mcp/oauth/callback` under it (served on `NEO_HTTP_PORT`). Required when the manifest has such servers.',
  ),
  NEO_SECRET_KEY: z
    .string()
    .min(32, "at least 32 characters (a long random string)")
    .optional()
    .describe(
      'Encrypts MCP servers\' OAuth tokens and client secrets at rest (AES-256-GCM). Required when the manifest has `"auth": "oauth"` servers; changing it makes everyone sign in again.',
    ),
  NEO_METRICS_PORT: int(0, 65535)
    .optional()
    .describe(
      "`/metrics` on a server of its own, never on the public port; unset = `NEO_HTTP_PORT + 6464` (3000 → 9464), so processes on one host with their own `NEO_HTTP_PORT` never collide. With `SHARDS` set, plus the first shard id.",
    ),
  NEO_METRICS_HOST: z
    .string()
    .min(1)
    .default("127.0.0.1")
    .describe("Where `/metrics` listens: loopback by default; any other address needs `NEO_METRICS_TOKEN`."),
  NEO_METRICS_TOKEN: z
    .string()
    .min(16, "at least 16 characters")
    .optional()
    .describe("When set, `/metrics` answers only `Authorization: Bearer <token>`."),
  NEO_ADMIN_USER_IDS: csv
    .default([])
    .describe(
      "Comma-separated user keys (`slack:T…:U…`, `discord:<guild>:<user>`) or platform user ids (`U…`, `discord:<user>`) with admin rights.",
    ),
  NEO_ANSWER_BOTS: csv
    .default([])
    .describe(
      "Comma-separated bot ids whose messages Neo answers like a person's (Slack `B…` bot ids or `U…` bot user ids, Discord bot user ids); other bots are ignored.",
    ),
  NEO_EXECUTOR_URL: optionalUrl.describe(
    "Remote executor base URL (see [approvals](approvals.md)); unset = the embedded executor.",
  ),
  NEO_EXECUTOR_TIMEOUT_MS: int(100).default(10_000).describe("Remote executor: timeout of one HTTP request."),
  NEO_EXECUTOR_RETRIES: int(0, 10)
    .default(2)
    .describe("Remote executor: retries after a network error, timeout, 408/425/429 or 5xx."),
  NEO_EXECUTOR_POLL_MS: int(10).default(1000).describe("Remote executor: status poll interval."),
  NEO_EXECUTOR_PLAN_TIMEOUT_MS: int(1000)
    .default(120_000)
    .describe("Remote executor: how long planning may take."),
  NEO_EXECUTOR_EXECUTE_TIMEOUT_MS: int(1000)
    .default(300_000)
    .describe("Remote executor: how long execution after approval may take."),
  NEO_APPROVAL_TTL_SECONDS: int(10).default(600).describe("An approval not decided within this expires."),
  NEO_APPROVAL_POLL_MS: int(10)
    .default(500)
    .describe("How often a waiting `core_execute` reads the store for a click taken on another instance."),
  NEO_MAX_PENDING_APPROVALS: int(1)
    .default(3)
    .describe(
      "Open (pending) approvals one user may have at once; a further `core_execute` is refused to the model with the reason. One model step posts at most one approval prompt.",
    ),
  NEO_CAP_UNIT: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,20}$/, "an asset symbol such as USDC")
    .default("USDC")
    .transform((s) => s.toUpperCase())
    .describe("The unit of a spend cap set without an asset (`/neo limit <user> <amount>`)."),
  NEO_ASSET_RATES: csv
    .default([])
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^[A-Za-z0-9._-]{1,20}\/[A-Za-z0-9._-]{1,20}=\d+(\.\d+)?$/,
            "expected FROM/TO=rate, e.g. ETH/USDC=3000",
          ),
      ),
    )
    .transform((pairs) =>
      Object.fromEntries(
        pairs.map((p) => {
          const [pair, rate] = p.split("=") as [string, string];
          return [pair.toUpperCase(), rate];
        }),
      ),
    )
    .describe(
      "Conversion table for spend caps, comma-separated `FROM/TO=rate` (one FROM is worth rate TO), e.g. `ETH/USDC=3000,USDT/USDC=1`. An action in an asset with no rate to a cap's unit has an unknown value and is over that cap.",
    ),
  NEO_SPEND_RULES: z
    .string()
    .default("{}")
    .transform(parseJson)
    .pipe(
      z.record(
        z.string().min(1),
        z
          .object({
            amount: z.string().min(1),
            asset: z.string().min(1).optional(),
            fixedAsset: z.string().min(1).optional(),
            recipient: z.string().min(1).optional(),
          })
          .strict()
          .refine(
            (r) => (r.asset === undefined) !== (r.fixedAsset === undefined),
            "give exactly one of asset, fixedAsset",
          ),
      ),
    )
    .describe(
      'Which argument of an Escalate tool is the amount, the asset (or a fixed asset) and the recipient, as JSON by advertised tool name, e.g. `{"wallet__swap":{"amount":"amount","asset":"from"}}`. Tools not listed are read by argument name (amount/value/quantity, asset/token/currency/symbol, recipient/to/address).',
    ),
  NEO_BUDGET_USD_DAILY: usd
    .optional()
    .describe(
      "Each user's model spend per UTC day, in USD (counted in the store from `NEO_MODEL_PRICES`): a notice at 80 %, the turn stops with a partial at 100 %. `/neo budget` sets one user's. Unset = unlimited.",
    ),
  NEO_BUDGET_USD_DAILY_DEPLOYMENT: usd
    .optional()
    .describe(
      "The whole deployment's model spend per UTC day, in USD, all users together; the same notice at 80 % and stop at 100 %. Unset = unlimited.",
    ),
});

/** Conversations, instances and logs. */
/** OpenTelemetry traces (the standard variables) and what they may carry. */
const tracingEnv = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl.describe(
    "OTLP/HTTP collector base URL (e.g. `http://127.0.0.1:4318`): one trace per turn is exported to `{url}/v1/traces`. Unset = no tracing, and the SDK is not loaded.",
  ),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(["http/protobuf", "http/json"])
    .default("http/protobuf")
    .describe(
      "OTLP encoding over HTTP: `http/protobuf` (the standard default) or `http/json`; gRPC is not supported.",
    ),
  OTEL_SERVICE_NAME: z.string().min(1).default("neo").describe("`service.name` of the exported spans."),
  NEO_TRACE_CONTENT: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .describe(
      "`true`: spans carry message text, model input and output, tool arguments and results. `false` (default): names, models, token counts, timings and outcomes only.",
    ),
});

const runtimeEnv = z.object({
  NEO_MAX_CONCURRENT_TURNS: int(1)
    .default(8)
    .describe(
      "Turns running at once in this instance; the rest wait, shared fairly: a freed slot goes to the waiting user with the fewest turns running.",
    ),
  NEO_USER_TURNS_PER_MINUTE: int(1)
    .default(20)
    .describe(
      "Turns one user may start per minute, sustained (one token bucket per user in the store, shared by every instance); beyond it their turns wait, told once, never dropped.",
    ),
  NEO_USER_TURN_BURST: int(1)
    .default(10)
    .describe("Turns one user may start at once before `NEO_USER_TURNS_PER_MINUTE` applies."),
  NEO_SHUTDOWN_GRACE_MS: int(0)
    .default(10_000)
    .describe("On SIGTERM, how long running turns get to reach a cancellation point."),
  NEO_INSTANCE_ID: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Unique per running instance, stable across its restarts; unset = `HOSTNAME` (a container's or pod's name), else the machine's host name. With `SHARDS` set (discord.js `ShardingManager`), `-shard-<first shard id>` is added.",
    ),
  NEO_LEASE_MS: int(1000)
    .default(30_000)
    .describe(
      "Per-conversation lease while an instance runs it; renewed every third of it, taken over after expiry.",
    ),
  NEO_IDLE_EVICT_MS: int(1000)
    .default(600_000)
    .describe("An idle conversation leaves memory after this long (its transcript stays stored)."),
  NEO_DEDUPE_TTL_MS: int(1000)
    .default(86_400_000)
    .describe("How long a platform message or event id is remembered to drop retried deliveries."),
  NEO_LOG_LEVEL: z
    .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
    .optional()
    .describe("Level of the JSON log lines; unset = `info` on the platforms, `warn` in the console chat."),
});

/** The sections of the configuration, in the order the docs list them. */

/** A variable that holds JSON: parsed, or one "not valid JSON" issue (its shape is checked next). */
function parseJson(s: string, ctx: z.RefinementCtx): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    ctx.addIssue({ code: "custom", message: "not valid JSON" });
    return z.NEVER;
  }
}

export const configSections = [
  { title: "Model endpoint", schema: modelEnv },
  { title: "Agent loop", schema: loopEnv },
  { title: "Files", schema: filesEnv },
  { title: "Tools", schema: toolsEnv },
  { title: "Storage", schema: storageEnv },
  { title: "Discord", schema: discordEnv },
  { title: "Slack", schema: slackEnv },
  { title: "Server, access and approvals", schema: serverEnv },
  { title: "Conversations, instances and logs", schema: runtimeEnv },
  { title: "Traces", schema: tracingEnv },
] as const;

/** The environment schema. Each key is the variable's name. */
export const envSchema = z.object({
  ...modelEnv.shape,
  ...loopEnv.shape,
  ...filesEnv.shape,
  ...toolsEnv.shape,
  ...storageEnv.shape,
  ...discordEnv.shape,
  ...slackEnv.shape,
  ...serverEnv.shape,
  ...runtimeEnv.shape,
  ...tracingEnv.shape,
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
    // A URL may carry a password (and a malformed one cannot be redacted reliably): never echoed.
    const secret = /TOKEN|KEY|SECRET|PASSWORD|_URL$/.test(name);
    const shown = got === undefined ? "it is missing" : secret ? "the value given" : `got "${got}"`;
    throw new ConfigError(`${name}: ${issue.message} (${shown})`);
  }
  const cfg = parsed.data;
  const oauth = [cfg.SLACK_CLIENT_ID, cfg.SLACK_CLIENT_SECRET, cfg.SLACK_STATE_SECRET];
  if (oauth.some(Boolean) && !oauth.every(Boolean)) {
    throw new ConfigError(
      "SLACK_CLIENT_ID: the OAuth install needs all of SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET",
    );
  }
  if (cfg.SLACK_CLIENT_ID && cfg.SLACK_BOT_TOKEN) {
    throw new ConfigError(
      "SLACK_BOT_TOKEN: set it (one workspace) or the OAuth install's SLACK_CLIENT_ID (many workspaces), not both",
    );
  }
  if (cfg.SLACK_CLIENT_ID && cfg.SLACK_APP_TOKEN) {
    throw new ConfigError(
      "SLACK_APP_TOKEN: the OAuth install serves /slack/install over HTTP; unset it (Socket Mode) or the SLACK_CLIENT_* variables",
    );
  }
  if (cfg.REDIS_URL?.includes(",") && !cfg.REDIS_CLUSTER) {
    throw new ConfigError(
      "REDIS_URL: several URLs name a Redis Cluster's seed nodes; set REDIS_CLUSTER=true",
    );
  }
  if (cfg.REDIS_CLUSTER && !cfg.REDIS_URL) {
    throw new ConfigError("REDIS_CLUSTER: set REDIS_URL to the cluster's seed nodes, comma-separated");
  }
  if (cfg.NEO_SOFT_PCT >= cfg.NEO_HARD_PCT) {
    throw new ConfigError(
      `NEO_SOFT_PCT: must be below NEO_HARD_PCT (${cfg.NEO_SOFT_PCT} >= ${cfg.NEO_HARD_PCT})`,
    );
  }
  if (cfg.NEO_BUDGET_USD_DAILY !== undefined || cfg.NEO_BUDGET_USD_DAILY_DEPLOYMENT !== undefined) {
    // A model without a price would spend without counting: the budget would not hold.
    const unpriced = [cfg.NEO_MAIN_MODEL, cfg.NEO_CHEAP_MODEL].filter(
      (m): m is string => m !== undefined && !cfg.NEO_MODEL_PRICES?.[m],
    );
    if (unpriced.length > 0) {
      throw new ConfigError(
        `NEO_MODEL_PRICES: a USD budget is set, so every model needs a price; missing ${unpriced.join(", ")}`,
      );
    }
  }
  const base = cfg.OPENAI_BASE_URL ? new URL(cfg.OPENAI_BASE_URL) : undefined;
  if (base && (base.username || base.password) && cfg.OPENAI_API_KEY) {
    throw new ConfigError(
      "OPENAI_BASE_URL: carries a user and password while OPENAI_API_KEY is set; requests carry one Authorization header, so keep only one of them",
    );
  }
  if (!isLoopback(cfg.NEO_METRICS_HOST) && !cfg.NEO_METRICS_TOKEN) {
    throw new ConfigError(
      `NEO_METRICS_TOKEN: must be set when /metrics listens beyond loopback (NEO_METRICS_HOST is "${cfg.NEO_METRICS_HOST}")`,
    );
  }
  return cfg;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * `.env` in the working directory (or `NEO_ENV_FILE`; `off` = none) fills the variables the
 * environment does not already set. (`process.loadEnvFile` needs Node 20.12; pdfjs-dist, which reads PDFs, needs 20.19.)
 */
export function loadEnvFile(env: NodeJS.ProcessEnv = process.env): void {
  const path = env.NEO_ENV_FILE ?? ".env";
  if (path === "off" || !existsSync(path)) return;
  process.loadEnvFile(path);
}

/**
 * Write-back calls at once: `NEO_WRITEBACK_CONCURRENCY`, else the turn slots. A user's waiting turns
 * are one call, so write-back needs at most a slot per user finishing turns; as many slots as turns
 * can run keeps it in step with the turns however far an operator scales them.
 */
export function writebackConcurrencyOf(
  cfg: Pick<Config, "NEO_WRITEBACK_CONCURRENCY" | "NEO_MAX_CONCURRENT_TURNS">,
): number {
  return cfg.NEO_WRITEBACK_CONCURRENCY ?? cfg.NEO_MAX_CONCURRENT_TURNS;
}

/** Values that must never appear in logs or messages. */
export function secretsOf(cfg: Config): string[] {
  return [
    cfg.OPENAI_API_KEY,
    cfg.DISCORD_TOKEN,
    cfg.SLACK_BOT_TOKEN,
    cfg.SLACK_SIGNING_SECRET,
    cfg.SLACK_APP_TOKEN,
    cfg.NEO_METRICS_TOKEN,
    cfg.SLACK_CLIENT_SECRET,
    cfg.SLACK_STATE_SECRET,
  ].filter((s): s is string => typeof s === "string" && s.length > 0);
}

/** Configured URLs that may carry credentials (their secret parts are redacted by value too). */
export function urlsOf(cfg: Config): string[] {
  return [
    ...(cfg.REDIS_URL?.split(",").map((u) => u.trim()) ?? []),
    cfg.OPENAI_BASE_URL,
    cfg.NEO_EXECUTOR_URL,
    cfg.SLACK_API_URL,
    cfg.DISCORD_API_URL,
  ].filter((u): u is string => typeof u === "string");
}
