/**
 * The MCP SDK's `OAuthClientProvider` for one (principal, server), backed by the vault: the SDK does
 * discovery, registration, PKCE, the resource indicator, refresh and scope step-up; this only keeps
 * what it hands over. Registration is the manifest's pre-registered client, else its client ID
 * metadata document URL, else dynamic registration (saved per principal and server). The
 * `client_credentials` and `id_jag` grants have no redirect: the SDK asks for a token with the body
 * `prepareTokenRequest` makes.
 *
 * A flow's `state` and verifier are recorded together by `redirectToAuthorization`, bound to the
 * principal and server; the callback (`sign-in.ts`) takes them back once.
 */
import { randomBytes } from "node:crypto";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { createPrivateKeyJwtAuth } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthSettings } from "../manifest.js";
import { JWT_BEARER_GRANT, jwtBearerRequest, requestIdJag } from "./id-jag.js";
import type { OAuthPrincipal, OAuthVault } from "./vault.js";

export interface ProviderOptions {
  vault: OAuthVault;
  principal: OAuthPrincipal;
  alias: string;
  settings: OAuthSettings;
  redirectUrl: string;
  /** A flow started: the URL the person must open (never logged, never shown to the model). */
  onAuthorizationUrl(url: URL): void;
  /** The callback is finishing this flow: its verifier, taken from the vault with its state. */
  verifier?: string;
  /** `id_jag`: the enterprise IdP's ID token for the principal (`idp-session.ts`). */
  idToken?: () => Promise<string>;
}

export function createOAuthProvider(o: ProviderOptions): OAuthClientProvider {
  const { vault, principal, alias, settings } = o;
  let state: string | undefined;
  let verifier: string | undefined = o.verifier;
  const preRegistered: OAuthClientInformationMixed | undefined = settings.client_id
    ? {
        client_id: settings.client_id,
        ...(settings.client_secret ? { client_secret: settings.client_secret } : {}),
      }
    : undefined;
  // Client credentials and ID-JAG: no one signs in here, no redirect.
  const machine = settings.grant !== undefined;
  const grantTypes = {
    client_credentials: ["client_credentials"],
    id_jag: [JWT_BEARER_GRANT],
    interactive: ["authorization_code", "refresh_token"],
  }[settings.grant ?? "interactive"];
  const idp = settings.grant === "id_jag" ? settings.idp : undefined;
  const idToken = o.idToken;
  if (settings.grant === "id_jag" && !(idp && idToken))
    throw new Error(`"${alias}": id_jag without an enterprise IdP`);
  const metadata: OAuthClientMetadata = {
    client_name: "Neo",
    redirect_uris: machine ? [] : [o.redirectUrl],
    grant_types: grantTypes,
    response_types: machine ? [] : ["code"],
    token_endpoint_auth_method: settings.private_key
      ? "private_key_jwt"
      : settings.client_secret
        ? "client_secret_basic"
        : "none",
    ...(settings.scopes?.length ? { scope: settings.scopes.join(" ") } : {}),
  };
  return {
    get redirectUrl() {
      return machine ? undefined : o.redirectUrl;
    },
    ...(settings.grant === "client_credentials"
      ? {
          prepareTokenRequest: (scope?: string) =>
            new URLSearchParams({ grant_type: "client_credentials", ...(scope ? { scope } : {}) }),
        }
      : {}),
    ...(idp && idToken
      ? {
          // The SDK saved the discovery (authorization server, resource) before asking for a token.
          prepareTokenRequest: async (scope?: string) => {
            const jag = await requestIdJag(
              idp,
              await idToken(),
              await vault.discovery(principal, alias),
              scope,
            );
            return jwtBearerRequest(jag, scope);
          },
        }
      : {}),
    ...(settings.private_key && settings.client_id
      ? {
          addClientAuthentication: createPrivateKeyJwtAuth({
            issuer: settings.client_id,
            subject: settings.client_id,
            privateKey: settings.private_key,
            alg: settings.signing_algorithm ?? "RS256",
          }),
        }
      : {}),
    ...(settings.client_metadata_url ? { clientMetadataUrl: settings.client_metadata_url } : {}),
    get clientMetadata() {
      return metadata;
    },
    state: () => {
      state = randomBytes(24).toString("base64url");
      return state;
    },
    clientInformation: async () => preRegistered ?? (await vault.client(principal, alias)),
    saveClientInformation: (info: OAuthClientInformationMixed) => vault.saveClient(principal, alias, info),
    tokens: (): Promise<OAuthTokens | undefined> => vault.tokens(principal, alias),
    saveTokens: (tokens: OAuthTokens) => vault.saveTokens(principal, alias, tokens),
    saveCodeVerifier: (v: string) => {
      verifier = v;
    },
    codeVerifier: () => {
      if (!verifier) throw new Error(`no sign-in to "${alias}" in progress`);
      return verifier;
    },
    redirectToAuthorization: async (url: URL) => {
      if (!state || !verifier) throw new Error("authorization started without state or verifier");
      await vault.begin(state, principal, alias, verifier);
      o.onAuthorizationUrl(url);
    },
    saveDiscoveryState: (d: OAuthDiscoveryState) => vault.saveDiscovery(principal, alias, d),
    discoveryState: () => vault.discovery(principal, alias),
    invalidateCredentials: async (scope) => {
      if (scope === "verifier") return;
      await vault.clear(principal, alias, scope);
    },
  };
}
