/**
 * A local OAuth-protected MCP server for tests: the MCP SDK's own authorization-server router
 * (`mcpAuthRouter`, with its demo in-memory provider: dynamic registration, PKCE, an authorize
 * endpoint that approves at once and redirects) and its bearer-token guard in front of a
 * streamable HTTP MCP server whose one tool, `whoami`, answers with the token it was called with.
 * Tokens, access and refresh, can be revoked (RFC 7009 `/revoke`); `revoked` lists them. When
 * `signedInAs.email` is set, the server names that person: by default in an OpenID Connect
 * `id_token` in the token response (Core §3.1.3.3; unsigned, `alg: none`, as only its claims are
 * read), with `via: "userinfo"` at a `userinfo_endpoint` its metadata lists (Core §5.3, Discovery
 * §3) instead; else it names no one.
 */
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DemoInMemoryAuthProvider } from "@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import express from "express";

export interface OAuthMcpServer {
  /** The MCP endpoint (`…/mcp`). */
  url: string;
  /** Tokens revoked through `/revoke`. */
  revoked: string[];
  /** Who the authorization server signs in (the test's browser user); no one named when unset. */
  signedInAs: SignedInAs;
  close(): Promise<void>;
}

export interface SignedInAs {
  email?: string;
  via?: "id_token" | "userinfo";
}

/** The SDK's demo provider, issuing refresh tokens too (it issues none) so both can be revoked. */
class RevokingProvider extends DemoInMemoryAuthProvider {
  readonly revoked: string[] = [];
  readonly signedInAs: SignedInAs = {};
  override async exchangeAuthorizationCode(
    ...args: Parameters<DemoInMemoryAuthProvider["exchangeAuthorizationCode"]>
  ): Promise<OAuthTokens> {
    const { email, via } = this.signedInAs;
    const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");
    return {
      ...(await super.exchangeAuthorizationCode(...args)),
      refresh_token: randomUUID(),
      ...(email && via !== "userinfo"
        ? { id_token: `${b64({ alg: "none" })}.${b64({ sub: randomUUID(), email })}.` }
        : {}),
    };
  }
  async revokeToken(_client: OAuthClientInformationFull, req: OAuthTokenRevocationRequest): Promise<void> {
    this.revoked.push(req.token);
  }
  override async verifyAccessToken(token: string) {
    if (this.revoked.includes(token)) throw new Error("revoked");
    return super.verifyAccessToken(token);
  }
}

export async function startOAuthMcpServer(): Promise<OAuthMcpServer> {
  const app = express();
  const http: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const base = new URL(`http://localhost:${(http.address() as AddressInfo).port}`);
  const mcpUrl = new URL("/mcp", base);
  const provider = new RevokingProvider();
  // The SDK's router writes the metadata; a userinfo endpoint is added to it when asked for.
  app.get("/.well-known/oauth-authorization-server", (_req, res, next) => {
    if (provider.signedInAs.via === "userinfo") {
      const json = res.json.bind(res);
      res.json = (body: object) => json({ ...body, userinfo_endpoint: new URL("/userinfo", base).href });
    }
    next();
  });
  app.get("/userinfo", async (req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    const ok = await provider.verifyAccessToken(token).then(
      () => true,
      () => false,
    );
    if (!ok) return void res.status(401).json({ error: "invalid_token" });
    res.json({ sub: "user-1", email: provider.signedInAs.email });
  });
  app.use(
    mcpAuthRouter({ provider, issuerUrl: base, resourceServerUrl: mcpUrl, scopesSupported: ["mcp:tools"] }),
  );
  const guard = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  app.post("/mcp", express.json(), guard, async (req, res) => {
    const server = new McpServer({ name: "oauth-test", version: "1.0.0" });
    server.registerTool("whoami", { description: "The bearer token of this call" }, async (extra) => ({
      content: [{ type: "text", text: `token:${extra.authInfo?.token ?? "none"}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  return {
    url: mcpUrl.href,
    revoked: provider.revoked,
    signedInAs: provider.signedInAs,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
