/**
 * OAuth sign-in to a remote MCP server, against a real OAuth-protected MCP server
 * (test/support/oauth-mcp-server.ts) and Neo's real callback route on a real HTTP server: the test
 * plays the browser, following the authorization URL's redirect to the callback. Tokens are per
 * person and sealed at rest; a stolen, replayed or expired state and a callback completing another
 * person's flow are refused with nothing stored; disconnect revokes (RFC 7009) and deletes.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { oauthCallbackRoute } from "../../src/core/tools/oauth/callback-route.js";
import { oauthConnectionsFor } from "../../src/core/tools/oauth/from-manifest.js";
import { sealKey } from "../../src/core/tools/oauth/seal.js";
import { createOAuthConnections } from "../../src/core/tools/oauth/sign-in.js";
import { CALLBACK_PATH, type OAuthConnections } from "../../src/core/tools/oauth/sign-in-types.js";
import { createOAuthVault, credentialKey, STATE_TTL_MS } from "../../src/core/tools/oauth/vault.js";
import { startOpsServer } from "../../src/ops/http-server.js";
import { redactUrls } from "../../src/ops/redact.js";
import type { Store } from "../../src/store/types.js";
import { memoryStore } from "../support/memory-store.js";
import { type OAuthMcpServer, startOAuthMcpServer } from "../support/oauth-mcp-server.js";
import { whoamiAs } from "./helpers.js";

const ALICE = "slack:T1:UALICE";
const BOB = "slack:T1:UBOB";

let mcp: OAuthMcpServer;
let store: Store;
let ops: Server;
let oauth: OAuthConnections;
let clock = 1_000_000;
let callbackBase = "";

beforeAll(async () => {
  mcp = await startOAuthMcpServer();
  store = await memoryStore();
  let route: ReturnType<typeof oauthCallbackRoute> | undefined;
  ops = await startOpsServer(
    0,
    [{ path: CALLBACK_PATH, method: "GET", handler: (q, s) => route?.handler(q, s) }],
    "127.0.0.1",
  );
  callbackBase = `http://127.0.0.1:${(ops.address() as AddressInfo).port}`;
  oauth = createOAuthConnections({
    vault: createOAuthVault(store, sealKey("test-secret-key-of-enough-length!"), () => clock),
    servers: new Map([["tracker", { url: mcp.url, settings: {}, perUser: true }]]),
    redirectUrl: `${callbackBase}${CALLBACK_PATH}`,
  });
  route = oauthCallbackRoute(oauth);
});

afterAll(async () => {
  await new Promise((r) => ops.close(r));
  await mcp.close();
  await store.close();
});

/** Offer `user` a sign-in: the link Neo would send them privately. */
async function linkFor(user: string): Promise<string> {
  let link = "";
  const offer = await oauth.offerSignIn(user, "tracker", async (url) => {
    link = url;
    return true;
  });
  expect(offer).toBe("sent");
  return link;
}

/** The browser: open the sign-in URL; the authorization server approves and redirects back. */
async function authorize(url: string): Promise<URL> {
  const res = await fetch(url, { redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location")!);
}
async function open(callback: URL): Promise<{ status: number; text: string }> {
  const res = await fetch(callback);
  return { status: res.status, text: await res.text() };
}
/** A callback URL with one parameter taken from another. */
function withParam(url: URL, name: string, value: string): URL {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u;
}

function whoami(user: string, warnings: string[] = []): Promise<string | undefined> {
  const spec = { url: mcp.url, headers: {}, auth: "oauth", scope: "user" } as const;
  return whoamiAs("tracker", spec, oauth.provider({ kind: "user", user }, "tracker"), warnings);
}

describe("OAuth sign-in to an MCP server", () => {
  it("signs Alice in through the callback; her calls carry her token, never Bob's, and it is sealed at rest", async () => {
    expect(await oauth.unauthorized(ALICE)).toEqual([{ alias: "tracker" }]);
    const back = await authorize(await linkFor(ALICE));
    expect(back.pathname).toBe(CALLBACK_PATH);
    const done = await open(back);
    expect(done).toMatchObject({ status: 200 });
    expect(done.text).toContain("Signed in");
    expect(await oauth.unauthorized(ALICE)).toEqual([]);
    // The demo server names no account (no id_token, no userinfo): said so, not guessed.
    expect(done.text).toContain("the server did not say which account");
    expect(await oauth.connected(ALICE)).toEqual([{ server: "tracker", account: undefined }]);

    const aliceToken = (await oauth.provider({ kind: "user", user: ALICE }, "tracker").tokens())!
      .access_token;
    expect(await whoami(ALICE)).toBe(`token:${aliceToken}`);
    // Bob has not signed in: his connection gets no token at all, so it cannot start.
    expect(await oauth.unauthorized(BOB)).toEqual([{ alias: "tracker" }]);
    expect(await whoami(BOB)).toBeUndefined();
    const raw = JSON.stringify(await store.get(credentialKey({ kind: "user", user: ALICE }, "tracker")));
    expect(raw).not.toContain(aliceToken);
  });

  it("names the account a sign-in connected, from the userinfo endpoint or an id_token, as plain text", async () => {
    const signInAs = async (user: string, email: string, via: "id_token" | "userinfo") => {
      mcp.signedInAs.email = email;
      mcp.signedInAs.via = via;
      try {
        return await open(await authorize(await linkFor(user)));
      } finally {
        mcp.signedInAs.email = undefined;
        mcp.signedInAs.via = undefined;
      }
    };
    const jun = "slack:T1:UJUN";
    expect((await signInAs(jun, "jun@example.com", "userinfo")).text).toContain("for you as jun@example.com");
    expect(await oauth.connected(jun)).toEqual([{ server: "tracker", account: "jun@example.com" }]);
    // Confirmed once, at his next turn.
    expect(await oauth.takeFinished(jun)).toEqual([{ server: "tracker", account: "jun@example.com" }]);
    expect(await oauth.takeFinished(jun)).toEqual([]);

    // A name that tries to be a mention or a link in the chat loses its markup.
    const ivo = "slack:T1:UIVO";
    await signInAs(ivo, "<!channel> <https://evil.example|ivo>`x`", "id_token");
    const [named] = await oauth.connected(ivo);
    expect(named?.account).toBe("!channel https://evil.exampleivox");
    expect(named?.account).not.toMatch(/[<>`|]/);
  });

  it("refuses a replayed, a made-up and an expired state, storing nothing", async () => {
    const carol = "slack:T1:UCAROL";
    const back = await authorize(await linkFor(carol));
    expect((await open(withParam(back, "state", "x".repeat(32)))).status).toBe(400);
    expect(await oauth.connected(carol)).toEqual([]);
    expect((await open(back)).status).toBe(200);
    const replay = await open(back);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain("already used or expired");

    const dave = "slack:T1:UDAVE";
    const late = await authorize(await linkFor(dave));
    clock += STATE_TTL_MS + 1;
    expect((await open(late)).status).toBe(400);
    expect(await oauth.connected(dave)).toEqual([]);
  });

  it("refuses a callback that completes another person's flow with their code", async () => {
    const erin = "slack:T1:UERIN";
    const frank = "slack:T1:UFRANK";
    const erinBack = await authorize(await linkFor(erin));
    const frankBack = await authorize(await linkFor(frank));
    // Frank's code under Erin's state: the PKCE verifier bound to Erin's state does not match.
    const mixed = withParam(erinBack, "code", frankBack.searchParams.get("code")!);
    expect((await open(mixed)).status).toBe(400);
    expect(await oauth.connected(erin)).toEqual([]);
    expect(await oauth.connected(frank)).toEqual([]);
  });

  it("disconnect revokes the token at the server and deletes it; erasure deletes all", async () => {
    const gina = "slack:T1:UGINA";
    await open(await authorize(await linkFor(gina)));
    const token = (await oauth.provider({ kind: "user", user: gina }, "tracker").tokens())!.access_token;
    await oauth.disconnect(gina, "tracker");
    expect(mcp.revoked).toContain(token);
    expect(await oauth.connected(gina)).toEqual([]);
    await open(await authorize(await linkFor(gina)));
    // Her second sign-in is not confirmed yet (no turn since): its note goes with the rest.
    await oauth.eraseTokens(gina);
    expect(await oauth.connected(gina)).toEqual([]);
    expect(await store.keys(credentialKey({ kind: "user", user: gina }, ""))).toEqual([]);
    const hers = (await store.keys("mcp:oauth:")).filter((k) => k.includes("{slack:T1:UGINA}"));
    expect(hers).toEqual([]);
  });

  it("offers a person one link per server until it is used or expires; an undelivered one does not count", async () => {
    const ivy = "slack:T1:UIVY";
    const sends: string[] = [];
    const offer = (delivered = true) =>
      oauth.offerSignIn(ivy, "tracker", async (url) => {
        sends.push(url);
        return delivered;
      });
    // A send that failed (the platform refused it) leaves no offer behind.
    expect(await offer(false)).toBe("not-sent");
    expect(await offer()).toBe("sent");
    expect(await offer()).toBe("sent-earlier");
    expect(sends).toHaveLength(2);
    // The person declined at the server: the callback spends the link, a new one may be offered.
    const declined = withParam(await authorize(sends[1]!), "code", "");
    declined.searchParams.delete("code");
    declined.searchParams.set("error", "access_denied");
    expect((await open(declined)).status).toBe(400);
    expect(await offer()).toBe("sent");
    expect(await offer()).toBe("sent-earlier");
    // The link expired unused: offered again.
    clock += STATE_TTL_MS + 1;
    expect(await offer()).toBe("sent");
    expect(sends).toHaveLength(4);
    // Signed in with it: nothing to offer.
    expect((await open(await authorize(sends[3]!))).status).toBe(200);
    expect(await offer()).toBe("signed-in");
    expect(sends).toHaveLength(4);
  });

  it("puts no token, code or state in a warning or a logged callback URL", async () => {
    const hana = "slack:T1:UHANA";
    const warnings: string[] = [];
    expect(await whoami(hana, warnings)).toBeUndefined();
    const url = await linkFor(hana);
    const back = await authorize(url);
    await open(back);
    const token = (await oauth.provider({ kind: "user", user: hana }, "tracker").tokens())!.access_token;
    await whoami(hana, warnings);
    const lines = [...warnings, redactUrls(back.href), redactUrls(url)].join("\n");
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of [token, back.searchParams.get("code")!, back.searchParams.get("state")!])
      expect(lines).not.toContain(secret);
  });
});

describe("OAuth servers in the manifest", () => {
  it("validates the oauth fields and requires NEO_SECRET_KEY and NEO_PUBLIC_URL when any server uses them", () => {
    expect(() => parseManifest({ servers: { t: { url: "https://x/mcp", client_id: "c" } } })).toThrow(
      /server "t" field "client_id": is only for "auth": "oauth" servers/,
    );
    expect(() => parseManifest({ servers: { t: { url: "https://x/mcp", scope: "user" } } })).toThrow(
      /needs "auth": "oauth"/,
    );
    const manifest = parseManifest({
      servers: { t: { url: "https://x/mcp", auth: "oauth", scope: "user", scopes: ["read"] } },
    });
    expect(() => oauthConnectionsFor(manifest, {}, store, {})).toThrow(
      /^NEO_SECRET_KEY: .*OAuth servers \(t\)/,
    );
    expect(() => oauthConnectionsFor(manifest, {}, store, { NEO_SECRET_KEY: "k".repeat(32) })).toThrow(
      /^NEO_PUBLIC_URL: /,
    );
    const ok = oauthConnectionsFor(manifest, {}, store, {
      NEO_SECRET_KEY: "k".repeat(32),
      NEO_PUBLIC_URL: "https://neo.example.com",
    });
    expect(ok?.perUser("t")).toBe(true);
    expect(oauthConnectionsFor(parseManifest({ servers: {} }), {}, store, {})).toBeUndefined();
  });
});
