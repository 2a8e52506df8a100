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
import type { Store } from "../../src/store/types.js";
import { wrote } from "../fakes/discord/fake-discord.js";
import type { MessagePayload } from "../fakes/discord/payloads.js";
import { memoryStore } from "../support/memory-store.js";
import { followSignIn, type SignInParts, startSignInParts } from "../support/oauth-signin.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { type Rig, startRig, until } from "./support/harness.js";

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

/** `/neo connections [action:… server:…]` by `user`: the deferred ephemeral reply's text. */
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
  const reply = await rig.fake.waitForCall(
    (c) => c.method === "PATCH" && c.path.endsWith(`/${token}/messages/@original`),
    "the command's reply",
  );
  return String((reply.body as { content?: unknown }).content);
}

describe("Discord: signing in to a per-person OAuth MCP server from the chat", () => {
  let rig: Rig | null = null;
  let parts: SignInParts | null = null;
  let store: Store | null = null;
  afterEach(async () => {
    await rig?.close();
    await parts?.close();
    await store?.close();
    rig = parts = store = null;
  });

  it("Alice gets a DM link, signs in, her next turn has the tool with her token; Bob gets his own link", async () => {
    store = await memoryStore();
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

    expect(await followSignIn(aliceLink!)).toBe(200);

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
      expect: (q) => expect(toolNames(q).some((n) => n.startsWith("tracker__"))).toBe(false),
      reply: { text: "Bob, please sign in to tracker first." },
    });
    await fake.say(fake.bob, fake.channel, "who am I on the tracker?", { mentionBot: true });
    await fake.waitForCall(wrote("Bob, please sign in to tracker first."), "bob's answer");
    await until("Bob's link", () => dmLinks(r, fake.bob).length === 1);
    expect(dmLinks(r, fake.bob)[0]).not.toBe(aliceLink);
    expect(dmLinks(r, fake.alice)).toHaveLength(1);

    // /neo connections through the real slash command: Alice's sign-in listed, Bob has none.
    expect(await command(r, fake.alice)).toContain("• `tracker`");
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
