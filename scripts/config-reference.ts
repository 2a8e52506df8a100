/**
 * Renders `docs/configuration.md` from the zod schema in `src/config.ts` (descriptions, defaults,
 * accepted values). `npm run docs:config` writes it; `test/docs/config-reference.test.ts` fails
 * when the committed file differs from what this renders.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { configSections } from "../src/config.js";

export const CONFIG_REFERENCE_PATH = "docs/configuration.md";

const PREAMBLE = `# Configuration reference

<!-- Generated from src/config.ts by \`npm run docs:config\`; edit the schema, not this file. -->

Neo reads its settings from the environment once, at start-up, and validates them with zod. A
missing or malformed value stops start-up with one line naming the variable. An empty value
(\`FOO=\` in a \`.env\`) means unset.

A \`.env\` file in the working directory fills what the environment does not set:
\`cp .env.example .env\` and edit. \`NEO_ENV_FILE=path\` reads another file; \`NEO_ENV_FILE=off\` reads
none. [\`.env.example\`](../.env.example) lists every variable below with its default, and a test
keeps it, the \`Dockerfile\` and \`docker-compose.yml\` in step with this schema.

\`npm start\` with neither \`SLACK_BOT_TOKEN\` nor \`DISCORD_TOKEN\` starts the console chat; with
either or both, those platforms. Secrets (every variable whose name contains TOKEN, KEY or SECRET,
and every URL, which may carry a password) are never echoed in errors; secrets and the credentials
of any URL are replaced by \`[redacted]\` in logs and \`/healthz\`.
`;

/** What a value may be, from the variable's JSON schema. */
function accepts(field: z.ZodType): string {
  const js = z.toJSONSchema(field, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  if (Array.isArray(js.enum)) return js.enum.map((v) => `\`${String(v)}\``).join(", ");
  if (js.format === "uri") return "URL";
  if (typeof js.pattern === "string") return `text matching \`${js.pattern}\``;
  if (js.type === "number" && typeof js.exclusiveMinimum === "number")
    return `number > ${js.exclusiveMinimum}`;
  if (js.type === "integer") {
    const min = typeof js.minimum === "number" ? js.minimum : undefined;
    const max =
      typeof js.maximum === "number" && js.maximum < Number.MAX_SAFE_INTEGER ? js.maximum : undefined;
    if (min !== undefined && max !== undefined) return `integer ${min}–${max}`;
    if (min !== undefined) return `integer ≥ ${min}`;
    return "integer";
  }
  return "text";
}

/** The default as one would write it in the environment. */
function defaultOf(field: z.ZodType): string {
  const parsed = field.safeParse(undefined);
  if (!parsed.success || parsed.data === undefined) return "unset";
  const v = parsed.data;
  if (Array.isArray(v)) return v.length === 0 ? "empty" : `\`${v.join(",")}\``;
  return `\`${String(v)}\``;
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function renderConfigReference(): string {
  const parts = [PREAMBLE];
  for (const section of configSections) {
    parts.push(
      `\n## ${section.title}\n\n| variable | default | accepts | meaning |\n| --- | --- | --- | --- |\n`,
    );
    for (const [name, field] of Object.entries(section.schema.shape) as Array<[string, z.ZodType]>) {
      const description = field.description;
      if (!description)
        throw new Error(`src/config.ts: ${name} has no .describe(); every variable is documented`);
      parts.push(`| \`${name}\` | ${defaultOf(field)} | ${accepts(field)} | ${cell(description)} |\n`);
    }
  }
  return parts.join("");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(CONFIG_REFERENCE_PATH, renderConfigReference());
  process.stdout.write(`wrote ${CONFIG_REFERENCE_PATH}\n`);
}
