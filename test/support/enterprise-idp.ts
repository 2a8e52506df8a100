/**
 * Enterprise-managed authorization for tests, three local parties as the MCP extension
 * (`io.modelcontextprotocol/enterprise-managed-authorization`, ext-auth specification §3-5) lays
 * them out:
 * - an enterprise IdP: OpenID Connect discovery; single sign-on (an `/authorize` that signs in the
 *   test's browser user at once, authorization code with PKCE, refresh, RFC 7009 revocation); and
 *   RFC 8693 token exchange of an ID token it signed for its client, answering with an ID-JAG (`typ`
 *   `oauth-id-jag+jwt`) for the `audience` and `resource` asked, unless its policy denies the
 *   person. Its client (`IDP_CLIENT`/`IDP_SECRET`) authenticates in the body, as the spec's §4
 *   example does;
 * - an MCP server's authorization server: metadata (RFC 8414) and a token endpoint taking only the
 *   JWT-bearer grant (RFC 7523) from its pre-registered client with `client_secret_basic`, checking
 *   the ID-JAG's signature, `typ`, `aud` (its issuer), `resource` and `client_id`;
 * - the MCP server (protected-resource metadata, RFC 9728) whose tool `whoami` answers with the
 *   person the access token was issued for.
 * Every request body each party gets is kept, so a test can say which secrets went where.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomUUID, sign, verify } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import express from "express";

export const IDP_CLIENT = "neo-at-idp";
export const IDP_SECRET = "idp-secret-of-neo";
export const AS_CLIENT = "neo-at-docs";
export const AS_SECRET = "docs-secret-of-neo";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";

const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");

/** An ES256 JWT (RFC 7515 compact form, P-256 signature as r||s). */
function signJwt(header: object, payload: object, key: KeyObject): string {
  const input = `${b64({ alg: "ES256", ...header })}.${b64(payload)}`;
  const sig = sign("sha256", Buffer.from(input), { key, dsaEncoding: "ieee-p1363" });
  return `${input}.${sig.toString("base64url")}`;
}

/** The header and claims of `jwt` when `key` signed it and it has not expired; else undefined. */
function verifyJwt(
  jwt: string,
  key: KeyObject,
): { header: Record<string, unknown>; claims: Record<string, unknown> } | undefined {
  const [h, p, s] = jwt.split(".");
  if (!h || !p || !s) return undefined;
  const ok = verify(
    "sha256",
    Buffer.from(`${h}.${p}`),
    { key, dsaEncoding: "ieee-p1363" },
    Buffer.from(s, "base64url"),
  );
  if (!ok) return undefined;
  const claims = JSON.parse(Buffer.from(p, "base64url").toString()) as Record<string, unknown>;
  if (typeof claims.exp !== "number" || claims.exp * 1000 < Date.now()) return undefined;
  return { header: JSON.parse(Buffer.from(h, "base64url").toString()) as Record<string, unknown>, claims };
}

async function listen(app: express.Express): Promise<{ http: Server; base: string }> {
  const http: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return { http, base: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
}

export interface EnterpriseSetup {
  idpIssuer: string;
  /** The authorization server's issuer, the ID-JAG's audience. */
  asIssuer: string;
  mcpUrl: string;
  /** An ID token the IdP issued to `aud` (its client `IDP_CLIENT` by default) for `sub`. */
  idToken(sub: string, aud?: string): string;
  /** Who `/authorize` signs in (the test's browser), and the lifetime of the ID tokens it issues. */
  sso: { browserUser: string; idTokenTtl: number };
  /** Refresh tokens revoked at the IdP (RFC 7009). */
  revoked: string[];
  /** People the IdP's policy refuses an ID-JAG. */
  denied: Set<string>;
  /** Token-exchange requests the IdP got, and token requests the authorization server got. */
  idpRequests: Record<string, string>[];
  asRequests: Record<string, string>[];
  close(): Promise<void>;
}

export async function startEnterpriseSetup(): Promise<EnterpriseSetup> {
  const idpKeys = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const denied = new Set<string>();
  const idpRequests: Record<string, string>[] = [];
  const asRequests: Record<string, string>[] = [];

  const idpApp = express();
  const idp = await listen(idpApp);
  const asApp = express();
  const as = await listen(asApp);
  const mcpUrl = `${as.base}/mcp`;

  idpApp.get("/.well-known/openid-configuration", (_req, res) => {
    res.json({
      issuer: idp.base,
      authorization_endpoint: `${idp.base}/authorize`,
      token_endpoint: `${idp.base}/token`,
      jwks_uri: `${idp.base}/jwks`,
      response_types_supported: ["code"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["ES256"],
      grant_types_supported: ["authorization_code", "refresh_token", TOKEN_EXCHANGE],
      scopes_supported: ["openid", "offline_access"],
      revocation_endpoint: `${idp.base}/revoke`,
    });
  });
  // The person signed in at the IdP in the test's browser: `/authorize` approves at once as them.
  const sso = { browserUser: "nobody", idTokenTtl: 3600 };
  const codes = new Map<string, { sub: string; challenge: string; redirectUri: string }>();
  const refreshTokens = new Map<string, string>();
  const revoked: string[] = [];
  const mintIdToken = (sub: string, aud = IDP_CLIENT, ttl = sso.idTokenTtl) => {
    const now = Math.floor(Date.now() / 1000);
    return signJwt({}, { iss: idp.base, sub, aud, iat: now, exp: now + ttl }, idpKeys.privateKey);
  };
  const signedIn = (sub: string) => {
    const refresh = randomUUID();
    refreshTokens.set(refresh, sub);
    return {
      access_token: randomUUID(),
      token_type: "Bearer",
      id_token: mintIdToken(sub),
      refresh_token: refresh,
    };
  };
  idpApp.get("/authorize", (req, res) => {
    const q = req.query as Record<string, string>;
    if (
      q.client_id !== IDP_CLIENT ||
      q.code_challenge_method !== "S256" ||
      !q.code_challenge ||
      !q.redirect_uri
    )
      return void res.status(400).send("bad request");
    const code = randomUUID();
    codes.set(code, { sub: sso.browserUser, challenge: q.code_challenge, redirectUri: q.redirect_uri });
    const back = new URL(q.redirect_uri);
    back.searchParams.set("code", code);
    back.searchParams.set("state", q.state ?? "");
    res.redirect(back.href);
  });
  idpApp.post("/revoke", express.urlencoded({ extended: false }), (req, res) => {
    const body = req.body as Record<string, string>;
    if (body.client_id !== IDP_CLIENT || body.client_secret !== IDP_SECRET)
      return void res.status(401).json({ error: "invalid_client" });
    revoked.push(body.token ?? "");
    refreshTokens.delete(body.token ?? "");
    res.status(200).end();
  });
  idpApp.post("/token", express.urlencoded({ extended: false }), (req, res) => {
    const body = req.body as Record<string, string>;
    idpRequests.push(body);
    if (body.client_id !== IDP_CLIENT || body.client_secret !== IDP_SECRET)
      return void res.status(401).json({ error: "invalid_client" });
    if (body.grant_type === "authorization_code") {
      const flow = codes.get(body.code ?? "");
      codes.delete(body.code ?? "");
      const challenge = createHash("sha256")
        .update(body.code_verifier ?? "")
        .digest("base64url");
      if (!flow || flow.challenge !== challenge || flow.redirectUri !== body.redirect_uri)
        return void res.status(400).json({ error: "invalid_grant" });
      return void res.json(signedIn(flow.sub));
    }
    if (body.grant_type === "refresh_token") {
      const sub = refreshTokens.get(body.refresh_token ?? "");
      if (!sub) return void res.status(400).json({ error: "invalid_grant" });
      return void res.json({ access_token: randomUUID(), token_type: "Bearer", id_token: mintIdToken(sub) });
    }
    if (
      body.grant_type !== TOKEN_EXCHANGE ||
      body.requested_token_type !== "urn:ietf:params:oauth:token-type:id-jag" ||
      body.subject_token_type !== "urn:ietf:params:oauth:token-type:id_token" ||
      !body.audience
    )
      return void res.status(400).json({ error: "invalid_request" });
    const id = verifyJwt(body.subject_token ?? "", idpKeys.publicKey);
    if (!id || id.claims.iss !== idp.base || id.claims.aud !== IDP_CLIENT)
      return void res.status(400).json({ error: "invalid_grant", error_description: "bad ID token" });
    const sub = String(id.claims.sub);
    if (denied.has(sub))
      return void res
        .status(400)
        .json({ error: "access_denied", error_description: "policy denies this server" });
    const now = Math.floor(Date.now() / 1000);
    const jag = signJwt(
      { typ: "oauth-id-jag+jwt" },
      {
        iss: idp.base,
        sub,
        aud: body.audience,
        ...(body.resource ? { resource: body.resource } : {}),
        client_id: AS_CLIENT,
        jti: randomUUID(),
        iat: now,
        exp: now + 300,
      },
      idpKeys.privateKey,
    );
    res.json({
      access_token: jag,
      issued_token_type: "urn:ietf:params:oauth:token-type:id-jag",
      token_type: "N_A",
    });
  });

  const accessTokens = new Map<string, string>();
  asApp.get("/.well-known/oauth-protected-resource/mcp", (_req, res) => {
    res.json({ resource: mcpUrl, authorization_servers: [as.base] });
  });
  asApp.get("/.well-known/oauth-authorization-server", (_req, res) => {
    res.json({
      issuer: as.base,
      authorization_endpoint: `${as.base}/authorize`,
      token_endpoint: `${as.base}/token`,
      response_types_supported: ["code"],
      grant_types_supported: [JWT_BEARER],
      token_endpoint_auth_methods_supported: ["client_secret_basic"],
      authorization_grant_profiles_supported: ["urn:ietf:params:oauth:grant-profile:id-jag"],
    });
  });
  asApp.post("/token", express.urlencoded({ extended: false }), (req, res) => {
    const body = req.body as Record<string, string>;
    asRequests.push({ ...body, authorization: req.headers.authorization ?? "" });
    const basic = Buffer.from(`${AS_CLIENT}:${AS_SECRET}`).toString("base64");
    if (req.headers.authorization !== `Basic ${basic}`)
      return void res.status(401).json({ error: "invalid_client" });
    if (body.grant_type !== JWT_BEARER) return void res.status(400).json({ error: "unsupported_grant_type" });
    const jag = verifyJwt(body.assertion ?? "", idpKeys.publicKey);
    const c = jag?.claims;
    if (
      jag?.header.typ !== "oauth-id-jag+jwt" ||
      c?.iss !== idp.base ||
      c.aud !== as.base ||
      c.resource !== mcpUrl ||
      c.client_id !== AS_CLIENT
    )
      return void res.status(400).json({ error: "invalid_grant" });
    const token = createHash("sha256").update(randomUUID()).digest("hex");
    accessTokens.set(token, String(c.sub));
    res.json({ access_token: token, token_type: "Bearer", expires_in: 3600 });
  });
  const guard = requireBearerAuth({
    verifier: {
      verifyAccessToken: async (token) => {
        const sub = accessTokens.get(token);
        if (!sub) throw new Error("unknown token");
        return {
          token,
          clientId: AS_CLIENT,
          scopes: [],
          expiresAt: Math.floor(Date.now() / 1000) + 3600,
          extra: { sub },
        };
      },
    },
    resourceMetadataUrl: `${as.base}/.well-known/oauth-protected-resource/mcp`,
  });
  asApp.post("/mcp", express.json(), guard, async (req, res) => {
    const server = new McpServer({ name: "enterprise-docs", version: "1.0.0" });
    server.registerTool("whoami", { description: "Whom the access token was issued for" }, async (extra) => ({
      content: [{ type: "text", text: `sub:${String(extra.authInfo?.extra?.sub ?? "none")}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  const close = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));
  return {
    idpIssuer: idp.base,
    asIssuer: as.base,
    mcpUrl,
    idToken: (sub, aud) => mintIdToken(sub, aud, 3600),
    sso,
    revoked,
    denied,
    idpRequests,
    asRequests,
    close: async () => {
      await close(idp.http);
      await close(as.http);
    },
  };
}
