/**
 * The client the MCP conformance suite drives (`npm run conformance:mcp`): Neo's own server
 * connection (`src/core/tools/server-connection.ts`, the code every manifest HTTP server goes
 * through) pointed at the scenario's server, the URL the suite appends as the last argument. It
 * lists the tools and calls each once, as the model would, with arguments made from its schema.
 * A server's question (`elicitation/create`) is accepted as shown, with the schema's defaults.
 * The server is `"auth": "oauth"`, signed in for the deployment through Neo's OAuth code
 * (`src/core/tools/oauth/`): when a start or a call needs sign-in, this script plays the admin's
 * browser (opens the authorization URL, whose server approves at once) and hands the redirect's
 * code and state to the same `complete` the callback route calls, then tries again. Pre-registered
 * client credentials (and, for cross-app access, the enterprise IdP and its ID token) come from the
 * suite's `MCP_CONFORMANCE_CONTEXT`.
 * Exits non-zero when the server cannot be started or a call fails in transport.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { formFields, readAnswers } from "../../src/core/tools/elicitation.js";
import type { OAuthSettings } from "../../src/core/tools/manifest.js";
import { sealKey } from "../../src/core/tools/oauth/seal.js";
import { createOAuthConnections } from "../../src/core/tools/oauth/sign-in.js";
import { CALLBACK_PATH } from "../../src/core/tools/oauth/sign-in-types.js";
import { createOAuthVault, DEPLOYMENT } from "../../src/core/tools/oauth/vault.js";
import type { CallElicitor } from "../../src/core/tools/server-calls.js";
import { createServerConnection } from "../../src/core/tools/server-connection.js";
import { createFileStore } from "../../src/store/file-store.js";

const url = process.argv.at(-1);
if (!url?.startsWith("http")) {
  console.error("usage: client.ts <server-url> (the conformance suite appends it)");
  process.exit(2);
}

/** A value of the schema's type: the suite's tools check types, not values. */
function sample(schema: Record<string, unknown> | undefined, name: string): unknown {
  if (schema?.default !== undefined) return schema.default;
  if (Array.isArray(schema?.enum)) return schema.enum[0];
  switch (schema?.type) {
    case "number":
    case "integer":
      return name === "b" ? 3 : 2;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "conformance";
  }
}

function argumentsFor(tool: Tool): Record<string, unknown> {
  const props = (tool.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.fromEntries(Object.entries(props).map(([k, s]) => [k, sample(s, k)]));
}

/** A person who accepts a form as it is shown, prefilled with the schema's defaults. */
const acceptsDefaults: CallElicitor = {
  requester: "conformance",
  ask: async (params) => {
    if (params.mode === "url") return { action: "accept" };
    const read = readAnswers(formFields(params.requestedSchema), {});
    return "error" in read ? { action: "cancel" } : { action: "accept", content: read.content };
  },
};

const dataDir = mkdtempSync(join(tmpdir(), "neo-conformance-client-"));

/**
 * The suite's pre-registered client, when the scenario has one. A cross-app-access scenario also
 * gives an enterprise IdP and the ID token it issued to Neo: that is the manifest's `enterpriseIdp`
 * with `"grant": "id_jag"`, the token in its `id_token_file`.
 */
function settingsFromContext(): OAuthSettings {
  const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  const id = str(ctx.client_id);
  const secret = str(ctx.client_secret);
  const key = str(ctx.private_key_pem);
  const alg = str(ctx.signing_algorithm);
  const idpIssuer = str(ctx.idp_issuer);
  const idpClient = str(ctx.idp_client_id);
  const idToken = str(ctx.idp_id_token);
  let idp: OAuthSettings["idp"];
  if (idpIssuer && idpClient && idToken) {
    const file = join(dataDir, "idp-id-token");
    writeFileSync(file, idToken, { mode: 0o600 });
    idp = { issuer: idpIssuer, client_id: idpClient, id_token_file: file };
  }
  // The client-credentials scenarios are the only ones named so; their client signs itself in.
  const machine = process.env.MCP_CONFORMANCE_SCENARIO?.startsWith("auth/client-credentials");
  return {
    ...(id ? { client_id: id } : {}),
    ...(secret ? { client_secret: secret } : {}),
    ...(machine ? { grant: "client_credentials" as const } : {}),
    ...(idp ? { grant: "id_jag" as const, idp } : {}),
    ...(key ? { private_key: key } : {}),
    ...(alg === "RS256" || alg === "ES256" || alg === "PS256" || alg === "EdDSA"
      ? { signing_algorithm: alg }
      : {}),
  };
}

const store = await createFileStore({ dataDir, prefix: "neo" });
const oauth = createOAuthConnections({
  vault: createOAuthVault(store, sealKey("conformance-only-key")),
  servers: new Map([["conformance", { url, settings: settingsFromContext(), perUser: false }]]),
  redirectUrl: `http://localhost:3000${CALLBACK_PATH}`,
});
let signInUrl: URL | undefined;

/** The admin's browser: open the sign-in URL, and hand its redirect back to Neo's callback. */
async function signIn(): Promise<boolean> {
  const at = signInUrl;
  signInUrl = undefined;
  if (!at) return false;
  const res = await fetch(at, { redirect: "manual" });
  const location = res.headers.get("location");
  if (!location) return false;
  const back = new URL(location);
  const outcome = await oauth.complete(
    back.searchParams.get("state") ?? "",
    back.searchParams.get("code") ?? "",
  );
  if (!outcome.ok) console.error(`sign-in refused: ${outcome.reason}`);
  return outcome.ok;
}

let failed = false;
const conn = createServerConnection({
  alias: "conformance",
  spec: { url, headers: {}, auth: "oauth" },
  authProvider: oauth.provider(DEPLOYMENT, "conformance", (u) => {
    signInUrl = u;
  }),
  env: process.env,
  spawnTimeoutMs: 20_000,
  callTimeoutMs: 20_000,
  maxRestarts: 0,
  onToolsChanged: () => {},
  onWarning: (message) => console.error(message),
});

/** A few sign-ins at most: a server that keeps asking (scope step-up) must not loop us forever. */
const MAX_SIGN_INS = 3;
let signIns = 0;

await conn.start();
while (conn.info().status === "failed" && signIns++ < MAX_SIGN_INS && (await signIn())) await conn.start();
if (conn.info().status === "failed") failed = true;
for (const tool of conn.tools()) {
  for (;;) {
    try {
      const result = await conn.call(tool.name, argumentsFor(tool), tool.name, { elicit: acceptsDefaults });
      console.log(`${tool.name}: ${JSON.stringify(result.content)}`);
    } catch (err) {
      if (signInUrl && signIns++ < MAX_SIGN_INS && (await signIn())) continue;
      failed = true;
      console.error(`${tool.name}: ${(err as Error).message}`);
    }
    break;
  }
}
await conn.close();
await store.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
