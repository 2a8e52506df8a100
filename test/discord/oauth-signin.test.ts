/**
 * Signing in from the chat, end to end on Discord (issue 33 item 2): the real discord.js Client
 * against the fake, the real loop and tool surface, a real OAuth-protected MCP server and Neo's
 * callback route. Alice's mention turn leaves the server's tools out and tells the model; her link
 * reaches only her, by DM (a mention turn has no ephemeral message), as a link button; the test
 * follows it; her next turn calls the tool with her own token. Bob's turn has no tool and gets his
 * own link.
 */
import { afterEach, describe, expect, it } from "vitest";
import { discordUser } from "../../src/adapters/discord/keys.js";
import { cortexOwner } from "../../src/core/keys.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { wrote } from "../fakes/discord/fake-discord.js";
import type { MessagePayload } from "../fakes/discord/payloads.js";
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
import { type Rig, startRig, until } from "./support/harness.js";

const redis = await probeRedis();
const toolNames = (r: ScriptedRequest) => (r.tools ?? []).map((t) => t.function.name);
const lastResult = (r: ScriptedRequest) =>
  String(r.messages.filter((m) => m.role === "tool").at(-1)?.content);

/** The link buttons' URLs in a person's DMs with Neo. */
function dmLinks(rig: Rig, user: Parameters<Rig["fake"]["dmWith"]>[0]): string[] {
  const dm = rig.fake.dmWith(user);
  if (!dm) return [];
  return rig.fake.channelMessages(dm.id).flatMap((m: MessagePayload) => {
    const rows = (m.components ?? []) as Array<{ components: Array<{ url?: string }> }>;
    return rows.flatMap((r) => r.components.flatMap((c) => (c.url ? [c.url] : [])));
  });
}

/** The text of an interaction's deferred ephemeral reply (PATCH of `@original`). */
async function replyTo(rig: Rig, token: string): Promise<string> {
  const reply = await rig.fake.waitForCall(
    (c) => c.method === "PATCH" && c.path.endsWith(`/${token}/messages/@original`),
    "the interaction's reply",
  );
  return String((reply.body as { content?: unknown }).content);
}

/** `/neo connections [action:… server:…]` by `user`: the reply's text. */
async function command(
  rig: Rig,
  user: Rig["fake"]["alice"],
  action?: string,
  server?: string,
): Promise<string> {
  const token = await rig.fake.slash({
    user,
    sub: "connections",
    options: action
      ? [
          { name: "action", type: 3, value: action },
          { name: "server", type: 3, value: server ?? "" },
        ]
      : [],
  });
  return replyTo(rig, token);
}

describe("Discord: signing in to a per-person OAuth MCP server from the chat", () => {
  let rig: Rig | null = null;
  let parts: SignInParts | null = null;
  let store: Store | null = null;
  let logs: LogCapture | null = null;
  afterEach(async () => {
    logs?.stop();
    logs = null;
    await rig?.close();
    await parts?.close();
    await store?.close();
    rig = parts = store = null;
  });

  it("Alice gets a DM link, signs in, her next turn has the tool with her token; Bob gets his own link", async () => {
    // Every log line of the whole flow, at debug, as written (after redaction).
    logs = captureLogs("debug");
    store = await memoryStore();
    const kept = store;
    parts = await startSignInParts(store);
    const p = parts;
    rig = await startRig({ servers: { tracker: p.manifest.servers.tracker! }, oauth: p.oauth });
    const { fake, ep } = rig;
    const r = rig;

    ep.script({
      label: "alice: not signed in",
      expect: (q) => {
        expect(toolNames(q).some((n) => n.startsWith("tracker__"))).toBe(false);
        expect(q.system).toMatch(/tracker needs \S+ to sign in; a link was sent to them privately\./);
      },
      reply: { text: "Please sign in to tracker first." },
    });
    await fake.say(fake.alice, fake.channel, "who am I on the tracker?", { mentionBot: true });
    await fake.waitForCall(wrote("Please sign in to tracker first."), "alice's answer");
    await until("Alice's link", () => dmLinks(r, fake.alice).length === 1);
    expect(dmLinks(r, fake.bob)).toHaveLength(0);
    const [aliceLink] = dmLinks(r, fake.alice);

    // A second turn before she signs in: no second link; the model is told the first still works.
    ep.script({
      label: "alice: link sent earlier",
      expect: (q) =>
        expect(q.system).toMatch(
          /tracker needs \S+ to sign in; the private link sent to them earlier still works\./,
        ),
      reply: { text: "Use the link I sent you, Alice." },
    });
    await fake.say(fake.alice, fake.channel, "still nothing?", { mentionBot: true });
    await fake.waitForCall(wrote("Use the link I sent you, Alice."), "alice's reminder");
    expect(dmLinks(r, fake.alice)).toHaveLength(1);

    // Unless she asks: `/neo connections action:signin` answers her alone with a new link.
    const asked = await command(r, fake.alice, "signin", "tracker");
    expect(asked).toMatch(/^Sign in to `tracker` \(this link is only for you, good for 10 minutes\): http/);
    const fresh = /(http\S+)$/.exec(asked)![1]!;
    expect(fresh).not.toBe(aliceLink);
    p.mcp.signedInAs.email = "alice@example.com"; // the server names her account (an id_token)
    const back = await authorize(fresh);
    const secrets = [back.searchParams.get("code")!, back.searchParams.get("state")!];
    secrets.push(await pendingVerifier(kept, secrets[1]!));
    expect((await fetch(back)).status).toBe(200);

    let seen = "";
    ep.script(
      {
        label: "alice: signed in",
        expect: (q) => expect(toolNames(q)).toContain("tracker__whoami"),
        reply: { toolCalls: [{ name: "tracker__whoami", arguments: {} }] },
      },
      {
        label: "alice: answers",
        reply: (q) => {
          seen = lastResult(q);
          return { text: "You are signed in, Alice." };
        },
      },
    );
    await fake.say(fake.alice, fake.channel, "and now?", { mentionBot: true });
    await fake.waitForCall(wrote("You are signed in, Alice."), "alice's second answer");
    const alice = cortexOwner(discordUser(fake.guildId, fake.alice.id));
    const tokens = await p.vault.tokens({ kind: "user", user: alice }, "tracker");
    expect(seen).toBe(`token:${tokens?.access_token}`);

    ep.script({
      label: "bob: not signed in",
      expect: (q) => {
        expect(toolNames(q).some((n) => n.startsWith("tracker__"))).toBe(false);
        expect(q.system).toMatch(/tracker needs Bob to sign in; a link was sent to them privately\./);
        expect(JSON.stringify(q)).not.toContain(tokens!.access_token);
      },
      reply: { text: "Bob, please sign in to tracker first." },
    });
    await fake.say(fake.bob, fake.channel, "who am I on the tracker?", { mentionBot: true });
    await fake.waitForCall(wrote("Bob, please sign in to tracker first."), "bob's answer");
    await until("Bob's link", () => dmLinks(r, fake.bob).length === 1);
    expect(dmLinks(r, fake.bob)[0]).not.toBe(aliceLink);
    expect(dmLinks(r, fake.alice)).toHaveLength(1);

    // /neo connections through the real slash command: Alice's sign-in listed, Bob has none.
    expect(await command(r, fake.alice)).toContain("• `tracker` as alice@example.com");
    expect(await command(r, fake.bob)).toBe("You are not signed in to any tool server.");
    // Disconnect: revoked at the server (RFC 7009) and deleted from the store.
    expect(await command(r, fake.alice, "disconnect", "tracker")).toContain("Signed out of `tracker`");
    expect(p.mcp.revoked).toContain(tokens?.access_token);
    expect(await p.vault.tokens({ kind: "user", user: alice }, "tracker")).toBeUndefined();
    expect(await command(r, fake.alice)).toBe("You are not signed in to any tool server.");
    // Her next turn has the tool no more, and she is sent a new link.
    ep.script({
      label: "alice: signed out",
      expect: (q) => {
        expect(toolNames(q).some((n) => n.startsWith("tracker__"))).toBe(false);
        expect(q.system).toMatch(/tracker needs \S+ to sign in; a link was sent to them privately\./);
      },
      reply: { text: "Sign in again, Alice." },
    });
    await fake.say(fake.alice, fake.channel, "once more?", { mentionBot: true });
    await fake.waitForCall(wrote("Sign in again, Alice."), "alice's signed-out answer");
    await until("Alice's second link", () => dmLinks(r, fake.alice).length === 2);
    expect(dmLinks(r, fake.alice)[1]).not.toBe(aliceLink);

    // No log line of all this holds her access or refresh token, the code, a state or the verifier.
    secrets.push(tokens!.access_token, tokens!.refresh_token!);
    for (const link of [...dmLinks(r, fake.alice), ...dmLinks(r, fake.bob)])
      secrets.push(new URL(link).searchParams.get("state")!);
    const written = logs.raw();
    expect(written).toContain("tracker"); // the flow was logged at all
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(written).not.toContain(secret);
    }
  });

  it("in a /neo ask turn the link is an ephemeral follow-up, not a DM", async () => {
    store = await memoryStore();
    parts = await startSignInParts(store);
    rig = await startRig({ servers: { tracker: parts.manifest.servers.tracker! }, oauth: parts.oauth });
    const { fake, ep } = rig;
    ep.script({ reply: { text: "Please sign in to tracker first." } });
    await fake.slash({
      user: fake.alice,
      sub: "ask",
      options: [{ name: "text", type: 3, value: "who am I?" }],
    });
    const link = () =>
      fake.channelMessages(fake.channel.id).find((m) => m.content.startsWith("**tracker:**"));
    await until("the ephemeral link", () => link() !== undefined);
    expect(Number(link()!.flags) & 64).toBe(64); // EPHEMERAL
    const rows = link()!.components as Array<{ components: Array<{ url?: string }> }>;
    expect(rows[0]!.components[0]!.url).toMatch(/^http:\/\/localhost:\d+\/authorize\?/);
    expect(fake.dmWith(fake.alice)).toBeUndefined();
  });
});

describe.skipIf(!redis.ok)("Discord: an erased or denied person's sign-ins (Redis)", () => {
  let rig: Rig | null = null;
  let parts: SignInParts | null = null;
  let store: Store | null = null;
  afterEach(async () => {
    await rig?.close();
    await parts?.close();
    await store?.close();
    rig = parts = store = null;
  });

  it("/neo forget, an admin's /neo forget user:… and /neo-admin deny each revoke and delete that person's tokens; Dan's stay", async () => {
    const prefix = uniquePrefix("oauth-erase");
    store = await createStore({ redisUrl: redis.url, dataDir: "unused", prefix });
    parts = await startSignInParts(store);
    const p = parts;
    rig = await startRig({
      redis: { url: redis.url, prefix },
      servers: { tracker: p.manifest.servers.tracker! },
      oauth: p.oauth,
    });
    const r = rig;
    const { fake } = r;
    const alice = discordUser(fake.guildId, fake.alice.id);
    const bob = discordUser(fake.guildId, fake.bob.id);
    // Dan signed in from another guild: a person of his own, who nobody erases.
    const dan = discordUser("1000000000000000001", "1000000000000000002");
    const tokens = new Map<string, { access_token: string; refresh_token?: string }>();
    for (const u of [alice, bob, dan]) tokens.set(u, await signIn(p, u));
    for (const u of tokens.keys()) expect(await credentialsInRedis(redis.url, prefix, u)).toHaveLength(1);
    const gone = async (u: string) => {
      const t = tokens.get(u)!;
      expect(p.mcp.revoked).toEqual(expect.arrayContaining([t.access_token, t.refresh_token]));
      expect(await p.vault.tokens({ kind: "user", user: u }, "tracker")).toBeUndefined();
      expect(await credentialsInRedis(redis.url, prefix, u)).toEqual([]);
    };
    /** `/neo forget [user:…]` by `by`, confirmed with its button: the confirmation's reply. */
    const forget = async (by: typeof fake.alice, user?: typeof fake.alice) => {
      const token = await fake.slash({
        user: by,
        sub: "forget",
        options: user ? [{ name: "user", type: 6, value: user.id }] : [],
      });
      await replyTo(r, token);
      const asked = fake.channelMessages(fake.channel.id).find((m) => m.interaction_token === token)!;
      const rows = asked.components as Array<{ components: Array<{ custom_id: string }> }>;
      return replyTo(
        r,
        await fake.click({ user: by, message: asked, customId: rows[0]!.components[0]!.custom_id }),
      );
    };

    // Alice forgets herself.
    expect(await forget(fake.alice)).toMatch(/^(Forgotten|There was nothing)/);
    await gone(alice);
    // Carol (an admin: Manage Server) forgets Bob.
    expect(await forget(fake.carol, fake.bob)).toMatch(/^(Forgotten|There was nothing)/);
    await gone(bob);
    // Bob signs in again; Carol denies him: the reply says he was signed out.
    tokens.set(bob, await signIn(p, bob));
    const denied = await fake.slash({
      user: fake.carol,
      command: "neo-admin",
      sub: "deny",
      options: [{ name: "user", type: 6, value: fake.bob.id }],
    });
    expect(await replyTo(r, denied)).toContain("Signed them out of `tracker`");
    await gone(bob);
    // Dan's sign-in is untouched.
    expect(await credentialsInRedis(redis.url, prefix, dan)).toHaveLength(1);
    expect(p.mcp.revoked).not.toContain(tokens.get(dan)!.access_token);
  });
});
