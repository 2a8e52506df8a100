/**
 * The OAuth connections of a manifest's `"auth": "oauth"` servers, or none when it has none. A
 * manifest with such servers needs `NEO_SECRET_KEY` (tokens are sealed with it) and
 * `NEO_PUBLIC_URL` (the redirect URI is built from it): a clear error names what is missing.
 */
import { ConfigError } from "../../../config.js";
import type { Store } from "../../../store/types.js";
import { type EnterpriseIdp, isStdio, type Manifest, resolveServerSpec, resolveValue } from "../manifest.js";
import { sealKey } from "./seal.js";
import { createOAuthConnections } from "./sign-in.js";
import { CALLBACK_PATH, type OAuthConnections, type OAuthServer } from "./sign-in-types.js";
import { createOAuthVault } from "./vault.js";

export function oauthServers(
  manifest: Manifest,
  env: Readonly<Record<string, string | undefined>>,
): Map<string, OAuthServer> {
  const out = new Map<string, OAuthServer>();
  for (const [alias, raw] of Object.entries(manifest.servers)) {
    if (isStdio(raw) || raw.auth !== "oauth" || raw.disabled) continue;
    const spec = resolveServerSpec(alias, raw, env);
    if (isStdio(spec)) continue;
    const { client_id, client_secret, client_metadata_url, scopes, grant, private_key, signing_algorithm } =
      spec;
    out.set(alias, {
      url: spec.url,
      settings: {
        ...(client_id ? { client_id } : {}),
        ...(client_secret ? { client_secret } : {}),
        ...(client_metadata_url ? { client_metadata_url } : {}),
        ...(scopes ? { scopes } : {}),
        ...(grant ? { grant } : {}),
        ...(private_key ? { private_key } : {}),
        ...(signing_algorithm ? { signing_algorithm } : {}),
        ...(grant === "id_jag" && manifest.enterpriseIdp
          ? { idp: resolveIdp(manifest.enterpriseIdp, env, alias) }
          : {}),
      },
      perUser: spec.scope === "user",
    });
  }
  return out;
}

/** The manifest's enterprise IdP with its placeholders resolved, for server `alias`'s errors. */
function resolveIdp(
  idp: EnterpriseIdp,
  env: Readonly<Record<string, string | undefined>>,
  alias: string,
): EnterpriseIdp {
  const at = (field: string, v: string) => resolveValue(v, env, alias, `enterpriseIdp.${field}`);
  return {
    issuer: idp.issuer,
    client_id: at("client_id", idp.client_id),
    ...(idp.client_secret ? { client_secret: at("client_secret", idp.client_secret) } : {}),
    ...(idp.id_token_file ? { id_token_file: at("id_token_file", idp.id_token_file) } : {}),
  };
}

export function oauthConnectionsFor(
  manifest: Manifest,
  env: Readonly<Record<string, string | undefined>>,
  store: Store,
  cfg: { NEO_SECRET_KEY?: string | undefined; NEO_PUBLIC_URL?: string | undefined },
): OAuthConnections | undefined {
  const servers = oauthServers(manifest, env);
  if (servers.size === 0) return undefined;
  const names = [...servers.keys()].join(", ");
  if (!cfg.NEO_SECRET_KEY)
    throw new ConfigError(
      `NEO_SECRET_KEY: the manifest has OAuth servers (${names}); set it to a long random string (tokens are encrypted with it)`,
    );
  if (!cfg.NEO_PUBLIC_URL)
    throw new ConfigError(
      `NEO_PUBLIC_URL: the manifest has OAuth servers (${names}); set it to Neo's public base URL (sign-ins come back to ${CALLBACK_PATH} there)`,
    );
  return createOAuthConnections({
    vault: createOAuthVault(store, sealKey(cfg.NEO_SECRET_KEY)),
    servers,
    redirectUrl: new URL(CALLBACK_PATH, cfg.NEO_PUBLIC_URL).href,
  });
}
