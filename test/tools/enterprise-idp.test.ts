/**
 * Enterprise-managed authorization (`"grant": "id_jag"` with the manifest's `enterpriseIdp`),
 * against a local enterprise IdP, authorization server and MCP server (test/support/
 * enterprise-idp.ts): Neo's ID token is exchanged at the IdP for an ID-JAG naming the server's
 * authorization server and the server, the ID-JAG for an access token, and the server's tool runs
 * as the person the ID token names. The manifest goes through `oauthConnectionsFor`, the path
 * start-up takes. The ID token goes to the IdP only; a refusal is a clear warning with no token.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ManifestInput, parseManifest } from "../../src/core/tools/manifest.js";
import { oauthConnectionsFor } from "../../src/core/tools/oauth/from-manifest.js";
import type { OAuthConnections } from "../../src/core/tools/oauth/sign-in-types.js";
import { credentialKey, DEPLOYMENT, type OAuthPrincipal } from "../../src/core/tools/oauth/vault.js";
import type { Store } from "../../src/store/types.js";
import {
  AS_CLIENT,
  AS_SECRET,
  type EnterpriseSetup,
  IDP_CLIENT,
  IDP_SECRET,
  startEnterpriseSetup,
} from "../support/enterprise-idp.js";
import { memoryStore } from "../support/memory-store.js";
import { whoamiAs } from "./helpers.js";

let ent: EnterpriseSetup;
let store: Store;
let dir: string;
let tokenFile: string;
let oauth: OAuthConnections;
const env = { DOCS_SECRET: AS_SECRET, IDP_SECRET };

function manifest(server: Record<string, unknown> = {}, idp: Record<string, unknown> = {}): ManifestInput {
  return {
    enterpriseIdp: {
      issuer: ent.idpIssuer,
      client_id: IDP_CLIENT,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a manifest placeholder
      client_secret: "${IDP_SECRET}",
      id_token_file: tokenFile,
      ...idp,
    },
    servers: {
      docs: {
        url: ent.mcpUrl,
        auth: "oauth",
        grant: "id_jag",
        client_id: AS_CLIENT,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a manifest placeholder
        client_secret: "${DOCS_SECRET}",
        ...server,
      },
    },
  } as ManifestInput;
}

beforeAll(async () => {
  ent = await startEnterpriseSetup();
  store = await memoryStore();
  dir = mkdtempSync(join(tmpdir(), "neo-idp-"));
  tokenFile = join(dir, "id-token");
  oauth = oauthConnectionsFor(parseManifest(manifest()), env, store, {
    NEO_SECRET_KEY: "test-secret-key-of-enough-length!",
    NEO_PUBLIC_URL: "https://neo.example.com",
  })!;
});

afterAll(async () => {
  await ent.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Start `principal`'s connection to `docs` and call `whoami`; undefined when it cannot start. */
function whoami(
  warnings: string[] = [],
  via: OAuthConnections = oauth,
  principal: OAuthPrincipal = DEPLOYMENT,
): Promise<string | undefined> {
  const spec = {
    url: ent.mcpUrl,
    headers: {},
    auth: "oauth" as const,
    grant: "id_jag" as const,
    ...(principal.kind === "user" ? { scope: "user" as const } : {}),
  };
  return whoamiAs("docs", spec, via.provider(principal, "docs"), warnings);
}

describe("enterprise-managed authorization (ID-JAG)", () => {
  it("trades the IdP's ID token for an ID-JAG and that for an access token; the tool runs as that person", async () => {
    writeFileSync(tokenFile, ent.idToken("ann@acme.example"));
    expect(await whoami()).toBe("sub:ann@acme.example");
    const exchange = ent.idpRequests.at(-1)!;
    expect(exchange).toMatchObject({ audience: ent.asIssuer, resource: ent.mcpUrl, client_id: IDP_CLIENT });
    const token = (await oauth.provider(DEPLOYMENT, "docs").tokens())!.access_token;
    expect(JSON.stringify(await store.get(credentialKey(DEPLOYMENT, "docs")))).not.toContain(token);
  });

  it("reads the ID token file at each exchange, so a rotated token is used", async () => {
    await oauth.disconnect(undefined, "docs");
    writeFileSync(tokenFile, `${ent.idToken("bea@acme.example")}\n`);
    expect(await whoami()).toBe("sub:bea@acme.example");
  });

  it("sends the ID token to the IdP only, and the IdP's client secret nowhere else", async () => {
    const idToken = ent.idToken("cy@acme.example");
    writeFileSync(tokenFile, idToken);
    await oauth.disconnect(undefined, "docs");
    expect(await whoami()).toBe("sub:cy@acme.example");
    const toAs = JSON.stringify(ent.asRequests);
    expect(toAs).not.toContain(idToken);
    expect(toAs).not.toContain(IDP_SECRET);
    expect(JSON.stringify(ent.idpRequests)).not.toContain(AS_SECRET);
  });

  it("a refusal by the IdP leaves the server unstarted with a warning naming it, and no token in it", async () => {
    ent.denied.add("dan@acme.example");
    const denied = ent.idToken("dan@acme.example");
    writeFileSync(tokenFile, denied);
    await oauth.disconnect(undefined, "docs");
    const warnings: string[] = [];
    expect(await whoami(warnings)).toBeUndefined();
    expect(warnings.join("\n")).toContain("access_denied");
    // An ID token issued to another client of the IdP is not Neo's to present.
    const foreign = ent.idToken("eve@acme.example", "someone-else");
    writeFileSync(tokenFile, foreign);
    expect(await whoami(warnings)).toBeUndefined();
    expect(warnings.join("\n")).toContain("invalid_grant");
    for (const secret of [denied, foreign, IDP_SECRET, AS_SECRET])
      expect(warnings.join("\n")).not.toContain(secret);
  });
});

describe("enterprise-managed authorization, each person signed in at the IdP", () => {
  const ANN = "slack:T1:UANN";
  const BOB = "slack:T1:UBOB";
  let people: OAuthConnections;
  beforeAll(() => {
    const m = manifest({ scope: "user" }, { id_token_file: undefined });
    people = oauthConnectionsFor(parseManifest(m), env, store, {
      NEO_SECRET_KEY: "test-secret-key-of-enough-length!",
      NEO_PUBLIC_URL: "https://neo.example.com",
    })!;
  });
  const as = (user: string): OAuthPrincipal => ({ kind: "user", user });

  /** Offer `user` the sign-in; the link they get, if any. */
  async function offer(user: string): Promise<{ outcome: string; url?: string }> {
    let url: string | undefined;
    const outcome = await people.offerSignIn(user, "docs", async (u) => {
      url = u;
      return true;
    });
    return { outcome, ...(url ? { url } : {}) };
  }
  /** The browser, signed in at the IdP as `sub`: open the link; the IdP redirects back to Neo. */
  async function authorize(url: string, sub: string): Promise<URL> {
    ent.sso.browserUser = sub;
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status).toBe(302);
    return new URL(res.headers.get("location")!);
  }
  const callback = (back: URL) =>
    people.complete(back.searchParams.get("state") ?? "", back.searchParams.get("code") ?? "");
  async function signIn(user: string, sub: string): Promise<void> {
    const { url } = await offer(user);
    expect(await callback(await authorize(url!, sub))).toEqual({ ok: true, alias: "docs", account: sub });
  }

  it("one IdP sign-in per person: their calls run as them, and another person gets their own link", async () => {
    expect(await people.unauthorized(ANN)).toEqual([{ alias: "docs" }]);
    const first = await offer(ANN);
    expect(first.outcome).toBe("sent");
    expect(new URL(first.url!).origin).toBe(ent.idpIssuer);
    expect(new URL(first.url!).searchParams.get("redirect_uri")).toBe(
      "https://neo.example.com/mcp/oauth/callback",
    );
    expect((await offer(ANN)).outcome).toBe("sent-earlier");
    expect(await callback(await authorize(first.url!, "ann@acme.example"))).toEqual({
      ok: true,
      alias: "docs",
      account: "ann@acme.example",
    });
    expect(await people.unauthorized(ANN)).toEqual([]);
    // The account is the one the IdP's ID token names.
    expect(await people.connected(ANN)).toEqual([{ server: "docs", account: "ann@acme.example" }]);
    expect(await whoami([], people, as(ANN))).toBe("sub:ann@acme.example");

    expect(await people.unauthorized(BOB)).toEqual([{ alias: "docs" }]);
    expect(await whoami([], people, as(BOB))).toBeUndefined();
    await signIn(BOB, "bob@acme.example");
    expect(await whoami([], people, as(BOB))).toBe("sub:bob@acme.example");
    expect(await whoami([], people, as(ANN))).toBe("sub:ann@acme.example");
    const idpCreds = JSON.stringify(await store.get(credentialKey(as(ANN), "@idp")));
    const exchanged = ent.idpRequests.filter((r) => r.subject_token).map((r) => r.subject_token!);
    expect(exchanged.length).toBeGreaterThan(0);
    for (const t of exchanged) expect(idpCreds).not.toContain(t);
  });

  it("renews an expired ID token with the IdP's refresh token before the exchange", async () => {
    const CY = "slack:T1:UCY";
    ent.sso.idTokenTtl = 30; // inside Neo's one-minute margin: expired as far as the exchange goes
    await signIn(CY, "cy@acme.example");
    ent.sso.idTokenTtl = 3600;
    const before = ent.idpRequests.length;
    expect(await whoami([], people, as(CY))).toBe("sub:cy@acme.example");
    const after = ent.idpRequests.slice(before).map((r) => r.grant_type);
    expect(after).toEqual(["refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"]);
  });

  it("refuses a replayed state and another person's code, storing nothing", async () => {
    const DAN = "slack:T1:UDAN";
    const back = await authorize((await offer(DAN)).url!, "dan@acme.example");
    expect((await callback(back)).ok).toBe(true);
    expect(await callback(back)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("already used"),
    });

    const ERIN = "slack:T1:UERIN";
    const FRANK = "slack:T1:UFRANK";
    const erinBack = await authorize((await offer(ERIN)).url!, "erin@acme.example");
    const frankBack = await authorize((await offer(FRANK)).url!, "frank@acme.example");
    // Frank's code under Erin's state: the IdP checks Erin's PKCE verifier against it.
    const mixed = new URL(erinBack);
    mixed.searchParams.set("code", frankBack.searchParams.get("code")!);
    expect((await callback(mixed)).ok).toBe(false);
    expect(await people.connected(ERIN)).toEqual([]);
    expect(await people.connected(FRANK)).toEqual([]);
  });

  it("disconnect revokes the IdP sign-in at the IdP and drops the server's tokens; erasure leaves nothing", async () => {
    const GIA = "slack:T1:UGIA";
    await signIn(GIA, "gia@acme.example");
    expect(await whoami([], people, as(GIA))).toBe("sub:gia@acme.example");
    expect(await people.provider(as(GIA), "docs").tokens()).toBeDefined();
    const revokedBefore = ent.revoked.length;
    await people.disconnect(GIA, "docs");
    expect(ent.revoked.length).toBe(revokedBefore + 1);
    expect(await people.unauthorized(GIA)).toEqual([{ alias: "docs" }]);
    expect(await people.connected(GIA)).toEqual([]);
    expect(await people.provider(as(GIA), "docs").tokens()).toBeUndefined();
    expect(await whoami([], people, as(GIA))).toBeUndefined();

    await signIn(GIA, "gia@acme.example");
    expect(await whoami([], people, as(GIA))).toBe("sub:gia@acme.example");
    await people.eraseTokens(GIA);
    expect(await store.keys(credentialKey(as(GIA), ""))).toEqual([]);
  });
});

describe("enterprise IdP in the manifest", () => {
  it("validates id_jag servers and the enterpriseIdp section", () => {
    const { enterpriseIdp: _, ...noIdp } = manifest();
    expect(() => parseManifest(noIdp)).toThrow(
      /server "docs" field "grant": id_jag needs the manifest's "enterpriseIdp"/,
    );
    expect(() => parseManifest(manifest({ client_id: undefined, client_secret: undefined }))).toThrow(
      /id_jag needs client_id/,
    );
    expect(() => parseManifest(manifest({}, { issuer: "not a url" }))).toThrow(
      /field "enterpriseIdp.issuer"/,
    );
    expect(() => parseManifest(manifest({}, { id_token_file: undefined }))).toThrow(
      /id_jag for the deployment needs "enterpriseIdp"."id_token_file"/,
    );
    expect(
      parseManifest(manifest({ scope: "user" }, { id_token_file: undefined })).servers.docs,
    ).toMatchObject({
      scope: "user",
      grant: "id_jag",
    });
    expect(() => parseManifest(manifest({ auth: undefined }))).toThrow(/is only for "auth": "oauth" servers/);
    expect(() =>
      oauthConnectionsFor(parseManifest(manifest()), { DOCS_SECRET: AS_SECRET }, store, {
        NEO_SECRET_KEY: "k".repeat(32),
        NEO_PUBLIC_URL: "https://neo.example.com",
      }),
    ).toThrow(/server "docs": enterpriseIdp.client_secret needs environment variable IDP_SECRET/);
  });
});
