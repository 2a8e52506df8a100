/**
 * Signing in from the chat, end to end on Slack (issue 33 item 2): the real Bolt app, the real loop
 * and tool surface, a real OAuth-protected MCP server (test/support/oauth-mcp-server.ts) and Neo's
 * callback route on a real HTTP server. Ann's turn leaves the server's tools out, tells the model in
 * one line, and sends Ann alone an ephemeral sign-in link in the thread; the test plays her browser
 * through the authorization server and the callback; her next turn calls the tool with her token.
 * Bob's turn gets neither her token nor the tool, and he is sent his own link.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { captureLogs, type LogCapture } from "../ops/support/observe.js";
import { memoryStore } from "../support/memory-store.js";
import {
  authorize,
  credentialsInRedis,
  pendingVerifier,
  type SignInParts,
  signIn,
  startSignInParts,
} from "../support/oauth-signin.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { envelope, ephemeralClick, type Harness, mention, TEAM, until } from "./support/harness.js";
import { ephemeralsTo, neo, startNeo } from "./support/sign-in.js";

const redis = await probeRedis();
const THREAD = "1690000000.000777";
/** Bob asks in his own thread: a shared thread's transcript would show him Ann's earlier tool result. */
const BOB_THREAD = "1690000000.000778";
const toolNames = (r: ScriptedRequest) => (r.tools ?? []).map((t) => t.function.name);
const lastResult = (r: ScriptedRequest) =>
  String(r.messages.filter((m) => m.role === "tool").at(-1)?.content);

describe("Slack: signing in to a per-person OAuth MCP server from the chat", () => {
  let h: Harness | null = null;
  let parts: SignInParts | null = null;
  let store: Store | null = null;
  let logs: LogCapture | null = null;
  afterEach(async () => {
    logs?.stop();
    logs = null;
    await h?.close();
    await parts?.close();
    await store?.close();
    h = parts = store = null;
  });

  it("Ann gets a private link, signs in, and her next turn has the tool with her token; Bob does not", async () => {
    // Every log line of the whole flow, at debug, as written (after redaction).
    logs = captureLogs("debug");
    store = await memoryStore();
    const kept = store;
    parts = await startSignInParts(store);
    const { mcp, vault: sealed } = parts;
    h = await startNeo(parts);
    const hh = h;
    const ask = (user: string, text: string, thread = THREAD) =>
      hh.slack.event(envelope(mention("C1", user, text, { thread_ts: thread })));
    const linkTo = (user: string) =>
      hh.fake
        .callsTo("chat.postEphemeral")
        .filter((c) => c.args.user === user)
        .map((c) => JSON.stringify(c.args.blocks))
        .map((b) => /<(http[^|>]+)\|Open the link>/.exec(b)?.[1])
        .filter((u): u is string => !!u);
    const answered = (text: string) =>
      until(`"${text}"`, () => hh.fake.messages("C1").some((m) => m.text === text));

    // A channel whose admins allow no tool servers: no link there, nothing said to the model.
    expect(await neo(hh, "UADMIN", "channel tools none", "CRANDOM")).toContain("Changed");
    hh.ep.script({
      label: "ann: tools off here",
      expect: (r) => expect(r.system).not.toContain("to sign in"),
      reply: { text: "No tools in this channel." },
    });
    await hh.slack.event(envelope(mention("CRANDOM", "UANN", "who am I on the tracker?")));
    await until("no-tools answer", () =>
      hh.fake.messages("CRANDOM").some((m) => m.text === "No tools in this channel."),
    );
    expect(hh.fake.callsTo("chat.postEphemeral").filter((c) => c.args.user === "UANN")).toHaveLength(0);

    // Ann's first turn: no tracker tools, the model told why, Ann sent her link.
    hh.ep.script({
      label: "ann: not signed in",
      expect: (r) => {
        expect(toolNames(r).some((n) => n.startsWith("tracker__"))).toBe(false);
        expect(r.system).toContain("tracker needs Ann to sign in; a link was sent to them privately.");
      },
      reply: { text: "Please sign in to tracker first." },
    });
    await ask("UANN", "who am I on the tracker?");
    await answered("Please sign in to tracker first.");
    const [annLink] = linkTo("UANN");
    expect(annLink).toBeDefined();
    const ephemeral = hh.fake.callsTo("chat.postEphemeral").find((c) => c.args.user === "UANN")!;
    expect(ephemeral.args.channel).toBe("C1");
    expect(ephemeral.args.thread_ts).toBe(THREAD);
    // Only Ann: nothing to Bob, and the link is in no message the channel sees.
    expect(linkTo("UBOB")).toHaveLength(0);
    const url = annLink!.replaceAll("&amp;", "&");
    for (const m of hh.fake.messages("C1"))
      expect(m.text).not.toContain(new URL(url).searchParams.get("state"));

    // A second turn before she signs in: no second link; the model is told the first still works.
    hh.ep.script({
      label: "ann: link sent earlier",
      expect: (r) => {
        expect(toolNames(r).some((n) => n.startsWith("tracker__"))).toBe(false);
        expect(r.system).toContain(
          "tracker needs Ann to sign in; the private link sent to them earlier still works.",
        );
      },
      reply: { text: "Use the link I sent you, Ann." },
    });
    await ask("UANN", "still nothing?");
    await answered("Use the link I sent you, Ann.");
    expect(linkTo("UANN")).toHaveLength(1);

    // Unless she asks: `/neo connections signin` answers her alone with a new link.
    const asked = await neo(hh, "UANN", "connections signin tracker");
    expect(asked).toMatch(/^Sign in to `tracker` \(this link is only for you, good for 10 minutes\): http/);
    const fresh = /(http\S+)$/.exec(asked!)![1]!.replaceAll("&amp;", "&");
    expect(new URL(fresh).searchParams.get("state")).not.toBe(new URL(url).searchParams.get("state"));
    // The authorization server signs her in as ann@example.com and says so (an id_token).
    mcp.signedInAs.email = "ann@example.com";
    const back = await authorize(fresh);
    const secrets = [back.searchParams.get("code")!, back.searchParams.get("state")!];
    secrets.push(await pendingVerifier(kept, secrets[1]!));
    expect((await fetch(back)).status).toBe(200);

    // Ann's next turn has the tool; the server sees her token.
    let annToken = "";
    hh.ep.script(
      {
        label: "ann: signed in",
        expect: (r) => expect(toolNames(r)).toContain("tracker__whoami"),
        reply: { toolCalls: [{ name: "tracker__whoami", arguments: {} }] },
      },
      {
        label: "ann: answers",
        reply: (r) => {
          annToken = lastResult(r);
          return { text: "You are signed in as Ann." };
        },
      },
    );
    await ask("UANN", "and now?");
    await answered("You are signed in as Ann.");
    // She is told privately, once, which account the sign-in connected (a link finished by
    // someone else would show their account here).
    const confirmed = () => ephemeralsTo(hh, "UANN").filter((t) => t.includes("Connected to tracker as"));
    expect(confirmed()).toHaveLength(1);
    expect(confirmed()[0]).toContain("Connected to tracker as ann@example.com.");
    expect(ephemeralsTo(hh, "UBOB").join()).not.toContain("Connected to");
    const annTokens = await sealed.tokens({ kind: "user", user: `slack:${TEAM}:UANN` }, "tracker");
    expect(annToken).toBe(`token:${annTokens?.access_token}`);

    // Bob's turn: no tool, no token of Ann's in what the model sees; his own link.
    hh.ep.script({
      label: "bob: not signed in",
      expect: (r) => {
        expect(toolNames(r).some((n) => n.startsWith("tracker__"))).toBe(false);
        expect(r.system).toContain("tracker needs Bob to sign in; a link was sent to them privately.");
        expect(JSON.stringify(r.messages)).not.toContain(annToken.slice(6));
      },
      reply: { text: "Bob, please sign in to tracker first." },
    });
    await ask("UBOB", "who am I on the tracker?", BOB_THREAD);
    await answered("Bob, please sign in to tracker first.");
    const bobLinks = linkTo("UBOB");
    expect(bobLinks).toHaveLength(1);
    expect(bobLinks[0]).not.toBe(annLink);
    expect(linkTo("UANN")).toHaveLength(1);

    // /neo connections: Ann's sign-in listed (Bob has none); disconnect revokes and deletes it.
    expect(await neo(hh, "UANN", "connections")).toContain("• `tracker` as ann@example.com");
    expect(await neo(hh, "UBOB", "connections")).toBe("You are not signed in to any tool server.");
    expect(await neo(hh, "UANN", "connections disconnect tracker")).toContain("Signed out of `tracker`");
    expect(mcp.revoked).toContain(annTokens?.access_token);
    expect(await sealed.tokens({ kind: "user", user: `slack:${TEAM}:UANN` }, "tracker")).toBeUndefined();
    expect(await neo(hh, "UANN", "connections")).toBe("You are not signed in to any tool server.");
    // Her next turn is back to a private link.
    hh.ep.script({
      label: "ann: signed out",
      expect: (r) => expect(toolNames(r).some((n) => n.startsWith("tracker__"))).toBe(false),
      reply: { text: "Sign in again, Ann." },
    });
    await ask("UANN", "once more?");
    await answered("Sign in again, Ann.");
    expect(linkTo("UANN")).toHaveLength(2);

    // No log line of all this holds her access or refresh token, the code, the state or the verifier.
    secrets.push(annTokens!.access_token, annTokens!.refresh_token!);
    for (const link of [...linkTo("UANN"), ...linkTo("UBOB")])
      secrets.push(new URL(link.replaceAll("&amp;", "&")).searchParams.get("state")!);
    const written = logs.raw();
    expect(written).toContain("tracker"); // the flow was logged at all
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(written).not.toContain(secret);
    }
  });
});

describe.skipIf(!redis.ok)("Slack: an erased or denied person's sign-ins (Redis)", () => {
  let h: Harness | null = null;
  let parts: SignInParts | null = null;
  let store: Store | null = null;
  afterEach(async () => {
    await h?.close();
    await parts?.close();
    await store?.close();
    h = parts = store = null;
  });

  it("/neo forget, an admin's /neo forget <user> and /neo deny each revoke and delete that person's tokens; Dan's stay", async () => {
    const prefix = uniquePrefix("oauth-erase");
    store = await createStore({ redisUrl: redis.url, dataDir: "unused", prefix });
    parts = await startSignInParts(store);
    const p = parts;
    h = await startNeo(p, { memory: true, redis: { url: redis.url, prefix } });
    const hh = h;
    const key = (u: string) => `slack:${TEAM}:${u}`;
    const tokens = new Map<string, { access_token: string; refresh_token?: string }>();
    for (const u of ["UANN", "UBOB", "UCAROL", "UDAN"]) tokens.set(u, await signIn(p, key(u)));
    for (const u of tokens.keys())
      expect(await credentialsInRedis(redis.url, prefix, key(u))).toHaveLength(1);
    const confirm = async (user: string, value: string, responseId: string) => {
      await ephemeralClick(hh, { user, channel: "C1", actionId: "neo_confirm", value, responseId });
      await hh.fake.waitFor(() => hh.fake.responses.some((r) => r.id === responseId), "forget answered");
    };
    const gone = async (u: string) => {
      const t = tokens.get(u)!;
      expect(p.mcp.revoked).toEqual(expect.arrayContaining([t.access_token, t.refresh_token]));
      expect(await p.vault.tokens({ kind: "user", user: key(u) }, "tracker")).toBeUndefined();
      expect(await credentialsInRedis(redis.url, prefix, key(u))).toEqual([]);
    };

    // Ann forgets herself (the real command, confirmed by her button).
    await neo(hh, "UANN", "forget");
    await confirm("UANN", "forget", "ann-forgot");
    await gone("UANN");
    // An admin forgets Bob.
    await neo(hh, "UADMIN", "forget <@UBOB>");
    await confirm("UADMIN", `forget:${key("UBOB")}`, "bob-forgot");
    await gone("UBOB");
    // An admin denies Carol: the reply says she was signed out.
    expect(await neo(hh, "UADMIN", "deny <@UCAROL>")).toContain("Signed them out of `tracker`");
    await gone("UCAROL");
    // Dan's sign-in is untouched, and still works at the server.
    expect(await credentialsInRedis(redis.url, prefix, key("UDAN"))).toHaveLength(1);
    expect(p.mcp.revoked).not.toContain(tokens.get("UDAN")!.access_token);
    expect(await p.oauth.connected(key("UDAN"))).toEqual([{ server: "tracker", account: undefined }]);
  });
});
