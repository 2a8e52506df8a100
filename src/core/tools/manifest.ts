/**
 * The agent manifest (`agents/default.json`, path in `NEO_MCP_MANIFEST`): MCP servers by alias, each
 * stdio or streamable HTTP, plus optional escalate patterns and spawn timeout. Validated with zod;
 * `${VAR}` (or `${VAR:-default}`) placeholders are resolved from the environment at spawn time, so the
 * parsed manifest never holds secrets.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { ManifestError, MissingEnvVarError } from "./errors.js";

/** The placeholder a per-user server's spec names its user's folder with. */
export const USER_DIR_VAR = "NEO_USER_DIR";

/** Aliases prefix tool names (`alias__tool`), so they stay in the OpenAI charset and never contain `__`. */
const aliasSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,29}$/,
    "1-30 of A-Z a-z 0-9 - _, no '__', starting alphanumeric",
  );

const common = {
  /** Escalate patterns for this server's tools only; replaces the global list for it. */
  escalatePatterns: z.array(z.string().min(1)).min(1).optional(),
  /** Overrides the manifest-wide spawn timeout for this server. */
  spawnTimeoutMs: z.number().int().min(100).max(300_000).optional(),
  /** A disabled server is listed but never started. */
  disabled: z.boolean().optional(),
};

const stdioServerSchema = z
  .object({
    type: z.literal("stdio").optional(),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    /** Stdio servers inherit only a few variables (PATH, HOME, ...); pass everything else here. */
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().min(1).optional(),
    /** Directories created (recursively) before each start, e.g. a filesystem server's root. */
    createDirs: z.array(z.string().min(1)).default([]),
    /**
     * `user`: one process per user, spawned on that user's first call and stopped when idle, with
     * `${NEO_USER_DIR}` resolved to the user's own folder. `shared` (default): one process for all.
     */
    scope: z.enum(["shared", "user"]).default("shared"),
    ...common,
  })
  .strict();

/**
 * `"auth": "oauth"`: the server signs Neo in with OAuth (the MCP authorization spec). The client is
 * pre-registered (`client_id`, optional `client_secret`), named by a client ID metadata document
 * (`client_metadata_url`), or else registered dynamically. `scopes` are asked for when the server
 * does not say which it needs.
 */
const oauthFields = {
  auth: z.literal("oauth").optional(),
  client_id: z.string().min(1).optional(),
  client_secret: z.string().min(1).optional(),
  client_metadata_url: z.string().url().startsWith("https://", "must be an https URL").optional(),
  scopes: z.array(z.string().min(1).regex(/^\S+$/, "one scope, no spaces")).min(1).optional(),
  /**
   * `client_credentials`: no one signs in; the deployment's client gets tokens with its
   * `client_secret` or, instead, a JWT signed with `private_key` (PEM, `signing_algorithm`).
   * `id_jag`: enterprise-managed authorization (the MCP extension): no one signs in to this server;
   * the manifest's `enterpriseIdp` trades an ID token (the person's, or the deployment's) for an
   * ID-JAG, which this server's authorization server takes as a JWT-bearer grant from the
   * pre-registered client.
   */
  grant: z.enum(["client_credentials", "id_jag"]).optional(),
  private_key: z.string().min(1).optional(),
  signing_algorithm: z.enum(["RS256", "ES256", "PS256", "EdDSA"]).optional(),
};

const httpServerSchema = z
  .object({
    type: z.literal("http").optional(),
    url: z.string().min(1),
    headers: z.record(z.string(), z.string()).default({}),
    /**
     * With `"auth": "oauth"`: `user`, each person signs in and the server acts as them; `shared`
     * (default), an admin signs in once for the deployment.
     */
    scope: z.enum(["shared", "user"]).optional(),
    ...oauthFields,
    ...common,
  })
  .strict()
  .superRefine((s, ctx) => {
    const oauthOnly = [
      "client_id",
      "client_secret",
      "client_metadata_url",
      "scopes",
      "grant",
      "private_key",
      "signing_algorithm",
    ] as const;
    for (const f of oauthOnly)
      if (s[f] !== undefined && s.auth !== "oauth")
        ctx.addIssue({ code: "custom", path: [f], message: `is only for "auth": "oauth" servers` });
    if (s.client_secret && !s.client_id)
      ctx.addIssue({ code: "custom", path: ["client_secret"], message: "needs client_id" });
    if (
      s.grant === "client_credentials" &&
      (!s.client_id || (!s.client_secret && !s.private_key) || s.scope === "user")
    )
      ctx.addIssue({
        code: "custom",
        path: ["grant"],
        message:
          "client_credentials needs client_id and client_secret or private_key, and is deployment-wide",
      });
    if (s.grant === "id_jag" && !s.client_id)
      ctx.addIssue({
        code: "custom",
        path: ["grant"],
        message: "id_jag needs client_id (Neo's client at the server's authorization server)",
      });
    if (s.scope === "user" && s.auth !== "oauth")
      ctx.addIssue({
        code: "custom",
        path: ["scope"],
        message: `"user" on a url server needs "auth": "oauth" (each person signs in)`,
      });
  });

/**
 * `enterpriseIdp`: the enterprise identity provider of enterprise-managed authorization (servers
 * with `"grant": "id_jag"`). Its endpoints are found from `issuer`'s OpenID Connect metadata; Neo
 * is its client `client_id` (with `client_secret` when it is confidential). With `"scope": "user"`
 * each person signs in at the IdP (once for all such servers); for a deployment-wide server
 * `id_token_file` holds the ID token Neo presents, issued by this IdP to `client_id`, read at each
 * exchange so a rotated token (a mounted workload-identity file, say) is picked up. Placeholders
 * are allowed in all but `issuer`.
 */
const enterpriseIdpSchema = z
  .object({
    issuer: z.string().url(),
    client_id: z.string().min(1),
    client_secret: z.string().min(1).optional(),
    id_token_file: z.string().min(1).optional(),
  })
  .strict();
export type EnterpriseIdp = z.infer<typeof enterpriseIdpSchema>;

/** A server's OAuth settings as the manifest gives them (`idp`: the manifest's `enterpriseIdp`, for `id_jag`). */
export type OAuthSettings = { idp?: EnterpriseIdp } & Pick<
  z.infer<typeof httpServerSchema>,
  | "client_id"
  | "client_secret"
  | "client_metadata_url"
  | "scopes"
  | "grant"
  | "private_key"
  | "signing_algorithm"
>;

export const manifestSchema = z
  .object({
    $schema: z.string().optional(),
    description: z.string().optional(),
    /** Case-insensitive substrings that make a tool Escalate; replaces the defaults. */
    escalatePatterns: z.array(z.string().min(1)).min(1).optional(),
    spawnTimeoutMs: z.number().int().min(100).max(300_000).optional(),
    /** Where per-user folders (`${NEO_USER_DIR}`) are made, one per user key; placeholders allowed. */
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a manifest placeholder, resolved at start.
    usersDir: z.string().min(1).default("${NEO_DATA_DIR:-./data}/users"),
    servers: z.record(aliasSchema, z.union([stdioServerSchema, httpServerSchema])).default({}),
    enterpriseIdp: enterpriseIdpSchema.optional(),
  })
  .strict()
  .superRefine((m, ctx) => {
    for (const [alias, spec] of Object.entries(m.servers))
      if (!isStdio(spec) && spec.grant === "id_jag") {
        if (!m.enterpriseIdp)
          ctx.addIssue({
            code: "custom",
            path: ["servers", alias, "grant"],
            message: 'id_jag needs the manifest\'s "enterpriseIdp" (the IdP that issues the ID-JAG)',
          });
        else if (spec.scope !== "user" && !m.enterpriseIdp.id_token_file)
          ctx.addIssue({
            code: "custom",
            path: ["servers", alias, "grant"],
            message:
              'id_jag for the deployment needs "enterpriseIdp"."id_token_file" (with "scope": "user" each person signs in at the IdP)',
          });
      }
    // A shared server has no user: a folder placeholder there would be resolved from the
    // environment, or fail, and quietly share one folder among everyone.
    for (const [alias, spec] of Object.entries(m.servers)) {
      if ("scope" in spec && spec.scope === "user") continue;
      if (JSON.stringify(spec).includes(`\${${USER_DIR_VAR}`))
        ctx.addIssue({
          code: "custom",
          path: ["servers", alias],
          message: `uses \${${USER_DIR_VAR}} but is not "scope": "user" (only per-user servers have a user folder)`,
        });
    }
  });

export type Manifest = z.infer<typeof manifestSchema>;
/** A manifest as written (defaults not yet applied). */
export type ManifestInput = z.input<typeof manifestSchema>;
export type ServerSpecInput = NonNullable<ManifestInput["servers"]>[string];
export type ServerSpec = Manifest["servers"][string];
export type StdioServerSpec = z.infer<typeof stdioServerSchema>;
export type HttpServerSpec = z.infer<typeof httpServerSchema>;

export function isStdio(spec: ServerSpec): spec is StdioServerSpec {
  return "command" in spec;
}

/** Validate a manifest object. `source` (a path) is named in errors. */
export function parseManifest(value: unknown, source = "manifest"): Manifest {
  const parsed = manifestSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new ManifestError(`${source}: ${describePath(issue.path)}: ${issue.message}`);
}

/** Read and validate a manifest file. */
export async function loadManifest(path: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ManifestError(`${path}: cannot read the manifest (${(err as Error).message})`, { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(`${path}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  return parseManifest(json, path);
}

function describePath(path: readonly PropertyKey[]): string {
  if (path[0] === "servers" && path.length >= 2) {
    const rest = path.slice(2).map(String).join(".");
    return `server "${String(path[1])}"${rest ? ` field "${rest}"` : ""}`;
  }
  return path.length ? `field "${path.map(String).join(".")}"` : "top level";
}

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replace `${VAR}` / `${VAR:-default}` in one value. Throws `MissingEnvVarError` for an unset VAR. */
export function resolveValue(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  server: string,
  field: string,
): string {
  return value.replace(PLACEHOLDER, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    if (v !== undefined && v !== "") return v;
    if (fallback !== undefined) return fallback;
    throw new MissingEnvVarError(server, name, field);
  });
}

function resolveRecord(
  rec: Record<string, string>,
  env: Readonly<Record<string, string | undefined>>,
  server: string,
  field: string,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(rec).map(([k, v]) => [k, resolveValue(v, env, server, `${field}.${k}`)]),
  );
}

/** A server spec with every placeholder resolved. */
export function resolveServerSpec(
  alias: string,
  spec: ServerSpec,
  env: Readonly<Record<string, string | undefined>>,
): ServerSpec {
  if (isStdio(spec)) {
    return {
      ...spec,
      command: resolveValue(spec.command, env, alias, "command"),
      args: spec.args.map((a, i) => resolveValue(a, env, alias, `args.${i}`)),
      env: resolveRecord(spec.env, env, alias, "env"),
      createDirs: spec.createDirs.map((d, i) => resolveValue(d, env, alias, `createDirs.${i}`)),
      ...(spec.cwd ? { cwd: resolveValue(spec.cwd, env, alias, "cwd") } : {}),
    };
  }
  return {
    ...spec,
    url: resolveValue(spec.url, env, alias, "url"),
    headers: resolveRecord(spec.headers, env, alias, "headers"),
    ...(spec.client_id ? { client_id: resolveValue(spec.client_id, env, alias, "client_id") } : {}),
    ...(spec.client_secret
      ? { client_secret: resolveValue(spec.client_secret, env, alias, "client_secret") }
      : {}),
    ...(spec.private_key ? { private_key: resolveValue(spec.private_key, env, alias, "private_key") } : {}),
  };
}
