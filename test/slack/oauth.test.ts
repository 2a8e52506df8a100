/**
 * Many workspaces through the OAuth install, end to end: the real Bolt receiver serves
 * `/slack/install` (state cookie, redirect to Slack) and `/slack/oauth_redirect` (state checked,
 * `oauth.v2.access` at SLACK_API_URL, installation stored in Neo's store); each workspace's events
 * are answered with its own bot token; `app_uninstalled` removes one workspace's installation and
 * everything Neo kept about it (in the store and, byte for byte, on disk), and the other workspace
 * is untouched.
 * Response shapes: docs.slack.dev reference for oauth.v2.access and the app_uninstalled event.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SLACK_BOT_SCOPES } from "../../src/adapters/slack/installations.js";
import { isWorkspaceKey } from "../../src/core/workspace-data.js";
import type { FakeInstall } from "../fakes/slack/fake-slack.js";
import { foundOnDisk } from "../support/on-disk.js";
import { envelope, type Harness, installWorkspace, OAUTH, startHarness, userTs } from "./support/harness.js";

const A: FakeInstall = {
  code: "code-a",
  teamId: "TAAA",
  botUserId: "UBOTA",
  botId: "BA",
  token: "xoxb-aaa-111",
};
const B: FakeInstall = {
  code: "code-b",
  teamId: "TBBB",
  botUserId: "UBOTB",
  botId: "BB",
  token: "xoxb-bbb-222",
};

function mentionIn(team: FakeInstall, channel: string, text: string) {
  const ts = userTs();
  return envelope(
    { type: "app_mention", channel, user: "UANN", text: `<@${team.botUserId}> ${text}`, ts, event_ts: ts },
    undefined,
    team.teamId,
  );
}

describe("Slack OAuth install, many workspaces", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("installs two workspaces, answers each with its own token, and forgets one on uninstall", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "neo-oauth-"));
    h = await startHarness({
      dataDir,
      oauthInstalls: [A, B],
      turns: [
        { match: (r) => JSON.stringify(r.messages).includes("hello from A"), reply: { text: "Hi A." } },
        { match: (r) => JSON.stringify(r.messages).includes("hello from B"), reply: { text: "Hi B." } },
      ],
    });
    expect(h.adapter.auth).toBe("oauth");

    // Install: a state nobody issued is refused; the real flow stores each workspace's bot.
    const base = `http://127.0.0.1:${h.adapter.port()}`;
    const forged = await fetch(`${base}/slack/oauth_redirect?code=${A.code}&state=made-up`, {
      redirect: "manual",
    });
    expect(forged.status).toBeGreaterThanOrEqual(400);
    expect((await installWorkspace(h, A.code)).status).toBe(200);
    expect((await installWorkspace(h, B.code)).status).toBe(200);
    const exchanges = h.fake.callsTo("oauth.v2.access");
    expect(exchanges.map((c) => c.args.code)).toEqual([A.code, B.code]);
    expect(exchanges.every((c) => c.args.client_secret === OAUTH.clientSecret)).toBe(true);
    expect((await h.store.keys("slack:installation:")).sort()).toEqual([
      `slack:installation:${A.teamId}`,
      `slack:installation:${B.teamId}`,
    ]);

    // Each workspace is answered in its own thread with its own token.
    expect((await h.slack.event(mentionIn(A, "CA1", "hello from A"))).status).toBe(200);
    expect((await h.slack.event(mentionIn(B, "CB1", "hello from B"))).status).toBe(200);
    const answered = (channel: string, text: string) =>
      h!.fake.callsTo("chat.postMessage").find((c) => c.args.channel === channel && c.args.text === text);
    await h.fake.waitFor(() => !!answered("CA1", "Hi A.") && !!answered("CB1", "Hi B."), "both answers");
    const inChannel = (channel: string) =>
      h!.fake.calls.filter((c) => c.args.channel === channel && c.method.startsWith("chat."));
    expect(inChannel("CA1").length).toBeGreaterThan(0);
    expect(inChannel("CA1").every((c) => c.token === A.token)).toBe(true);
    expect(inChannel("CB1").every((c) => c.token === B.token)).toBe(true);
    expect(
      h.fake.calls
        .filter((c) => c.method === "users.info")
        .map((c) => c.token)
        .sort(),
    ).toEqual([A.token, B.token].sort());
    const keys = await h.store.keys("");
    expect(keys.some((k) => isWorkspaceKey(k, "slack", A.teamId))).toBe(true);
    expect(keys.some((k) => isWorkspaceKey(k, "slack", B.teamId))).toBe(true);

    // B uninstalls: its installation and data go; A's stay; B's events are no longer answered.
    h.fake.revoke(B.teamId);
    const gone = await h.slack.event(
      envelope({ type: "app_uninstalled", event_ts: String(Date.now() / 1000) }, undefined, B.teamId),
    );
    expect(gone.status).toBe(200);
    const after = await h.store.keys("");
    expect(after.filter((k) => isWorkspaceKey(k, "slack", B.teamId))).toEqual([]);
    expect(after).not.toContain(`slack:installation:${B.teamId}`);
    expect(after).toContain(`slack:installation:${A.teamId}`);
    expect(after.some((k) => isWorkspaceKey(k, "slack", A.teamId))).toBe(true);
    // Gone from disk too, byte for byte: the embedded store rewrote its log at the erasure.
    expect(foundOnDisk(dataDir, [B.token, "hello from B", "Hi B."])).toEqual([]);
    expect(foundOnDisk(dataDir, [A.token, "hello from A"])).toHaveLength(2);

    const postsBefore = h.fake.callsTo("chat.postMessage").length;
    const late = await h.slack.event(mentionIn(B, "CB1", "hello from B again"));
    expect(late.status).toBe(200);
    expect((await h.slack.event(mentionIn(A, "CA1", "hello from A again"))).status).toBe(200);
    h.ep.script({ reply: { text: "Still here, A." } });
    await h.fake.waitFor(() => !!answered("CA1", "Still here, A."), "A still answered");
    expect(
      h.fake
        .callsTo("chat.postMessage")
        .slice(postsBefore)
        .every((c) => c.args.channel === "CA1"),
    ).toBe(true);
    expect(
      h.fake.calls.filter((c) => c.token === B.token && c.status === 200 && c.method !== "auth.test"),
    ).not.toContainEqual(
      expect.objectContaining({ args: expect.objectContaining({ text: expect.stringContaining("again") }) }),
    );
  });
});

describe("the OAuth install's scopes", () => {
  it("are the bot scopes of slack-app-manifest.yaml, and the manifest subscribes the uninstall events", async () => {
    const { readFileSync } = await import("node:fs");
    const { parse } = await import("yaml");
    const manifest = parse(
      readFileSync(new URL("../../slack-app-manifest.yaml", import.meta.url), "utf8"),
    ) as {
      oauth_config: { scopes: { bot: string[] }; redirect_urls: string[] };
      settings: { event_subscriptions: { bot_events: string[] } };
    };
    expect([...SLACK_BOT_SCOPES].sort()).toEqual([...manifest.oauth_config.scopes.bot].sort());
    expect(manifest.oauth_config.redirect_urls.every((u) => u.endsWith("/slack/oauth_redirect"))).toBe(true);
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(
      expect.arrayContaining(["app_uninstalled", "tokens_revoked"]),
    );
  });
});
