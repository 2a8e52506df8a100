/**
 * The parts a chat sign-in test needs: a real OAuth-protected MCP server, Neo's callback route on a
 * real HTTP server, the OAuth connections from a manifest naming the server as per-person
 * (`tracker`), the vault to read the sealed tokens back, and the browser that follows a sign-in link.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { expect } from "vitest";
import type { UserKey } from "../../src/core/keys.js";
import { type Manifest, parseManifest } from "../../src/core/tools/manifest.js";
import { oauthCallbackRoute } from "../../src/core/tools/oauth/callback-route.js";
import { oauthConnectionsFor } from "../../src/core/tools/oauth/from-manifest.js";
import { open, sealKey } from "../../src/core/tools/oauth/seal.js";
import { CALLBACK_PATH, type OAuthConnections } from "../../src/core/tools/oauth/sign-in-types.js";
import {
  createOAuthVault,
  credentialKey,
  type OAuthVault,
  stateKey,
} from "../../src/core/tools/oauth/vault.js";
import { startOpsServer } from "../../src/ops/http-server.js";
import type { Store } from "../../src/store/types.js";
import { type OAuthMcpServer, startOAuthMcpServer } from "./oauth-mcp-server.js";
import { foundInRedis } from "./on-disk.js";

const SECRET = "k".repeat(32);

export interface SignInParts {
  mcp: OAuthMcpServer;
  /** `{ tracker: { url, auth: "oauth", scope: "user" } }`. */
  manifest: Manifest;
  oauth: OAuthConnections;
  vault: OAuthVault;
  close(): Promise<void>;
}

export async function startSignInParts(store: Store): Promise<SignInParts> {
  const mcp = await startOAuthMcpServer();
  let route: ReturnType<typeof oauthCallbackRoute> | undefined;
  const ops: Server = await startOpsServer(
    0,
    [{ path: CALLBACK_PATH, method: "GET", handler: (q, s) => route?.handler(q, s) }],
    "127.0.0.1",
  );
  const manifest = parseManifest({ servers: { tracker: { url: mcp.url, auth: "oauth", scope: "user" } } });
  const oauth = oauthConnectionsFor(manifest, {}, store, {
    NEO_SECRET_KEY: SECRET,
    NEO_PUBLIC_URL: `http://127.0.0.1:${(ops.address() as AddressInfo).port}`,
  })!;
  route = oauthCallbackRoute(oauth);
  return {
    mcp,
    manifest,
    oauth,
    vault: createOAuthVault(store, sealKey(SECRET)),
    async close() {
      await new Promise((r) => ops.close(r));
      await mcp.close();
    },
  };
}

/** The browser at the authorization server: it approves at once; the callback URL it redirects to. */
export async function authorize(url: string): Promise<URL> {
  const res = await fetch(url, { redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location")!);
}

/** The browser: open the sign-in URL; the authorization server approves and redirects to the callback. */
export async function followSignIn(url: string): Promise<number> {
  return (await fetch(await authorize(url))).status;
}

/** The PKCE verifier of the flow `state` names, read from the store while the flow is pending. */
export async function pendingVerifier(store: Store, state: string): Promise<string> {
  const rec = await store.get<{ verifier: string }>(stateKey(state));
  return open(sealKey(SECRET), rec!.verifier);
}

/** Sign `user` in to `tracker` as a turn would offer it (the link sent, the browser following it): their tokens. */
export async function signIn(parts: SignInParts, user: UserKey): Promise<OAuthTokens> {
  let link = "";
  const offer = await parts.oauth.offerSignIn(user, "tracker", async (url) => {
    link = url;
    return true;
  });
  expect(offer).toBe("sent");
  expect(await followSignIn(link)).toBe(200);
  const tokens = await parts.vault.tokens({ kind: "user", user }, "tracker");
  expect(tokens?.refresh_token).toBeDefined();
  return tokens!;
}

/** The Redis keys under `prefix` holding `user`'s `tracker` credentials, read from the server itself. */
export function credentialsInRedis(url: string, prefix: string, user: UserKey): Promise<string[]> {
  return foundInRedis(url, prefix, [credentialKey({ kind: "user", user }, "tracker")]);
}
