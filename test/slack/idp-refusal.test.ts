/**
 * Enterprise per-person sign-in (`"scope": "user"`, `"grant": "id_jag"`) when the company's IdP
 * refuses one person one server, end to end on Slack: the real Bolt app, loop and tool surface,
 * the local IdP, authorization server and MCP server of test/support/enterprise-idp.ts, the
 * manifest through `oauthConnectionsFor` as start-up builds it. Ann is signed in at the IdP but its
 * policy refuses her `docs`: her turn goes on without `docs`' tools, the model is told why, and Ann
 * alone is told privately, once, with the IdP's error code and no token. When the policy lets her
 * in, her next turn has the tool, running as her.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { oauthConnectionsFor } from "../../src/core/tools/oauth/from-manifest.js";
import type { Store } from "../../src/store/types.js";
import { captureLogs, type LogCapture } from "../ops/support/observe.js";
import {
  AS_CLIENT,
  AS_SECRET,
  type EnterpriseSetup,
  IDP_CLIENT,
  IDP_SECRET,
  startEnterpriseSetup,
} from "../support/enterprise-idp.js";
import { memoryStore } from "../support/memory-store.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { envelope, type Harness, mention, TEAM, until } from "./support/harness.js";
import { ephemeralsTo, neo, startNeo } from "./support/sign-in.js";

const THREAD = "1690000000.000901";
const toolNames = (r: ScriptedRequest) => (r.tools ?? []).map((t) => t.function.name);
const lastResult = (r: ScriptedRequest) =>
  String(r.messages.filter((m) => m.role === "tool").at(-1)?.content);

describe("Slack: the company's IdP refuses one person a per-person id_jag server", () => {
  let h: Harness | null = null;
  let ent: EnterpriseSetup | null = null;
  let store: Store | null = null;
  let logs: LogCapture | null = null;
  afterEach(async () => {
    logs?.stop();
    await h?.close();
    await ent?.close();
    await store?.close();
    h = ent = store = logs = null;
  });

  it("Ann's turn goes on without docs, the model is told, Ann is told once privately with the IdP's code", async () => {
    logs = captureLogs("debug");
    ent = await startEnterpriseSetup();
    store = await memoryStore();
    const manifest = parseManifest({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: manifest placeholders
      enterpriseIdp: { issuer: ent.idpIssuer, client_id: IDP_CLIENT, client_secret: "${IDP_SECRET}" },
      servers: {
        docs: {
          url: ent.mcpUrl,
          auth: "oauth",
          grant: "id_jag",
          scope: "user",
          client_id: AS_CLIENT,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a manifest placeholder
          client_secret: "${DOCS_SECRET}",
        },
      },
    });
    const env = { IDP_SECRET, DOCS_SECRET: AS_SECRET };
    const oauth = oauthConnectionsFor(manifest, env, store, {
      NEO_SECRET_KEY: "k".repeat(32),
      NEO_PUBLIC_URL: "https://neo.example.com",
    })!;
    h = await startNeo({ manifest, oauth, env });
    const hh = h;
    const ann = `slack:${TEAM}:UANN`;

    // Ann signs in at the IdP (the browser follows her link; the callback finishes it).
    let link = "";
    expect(
      await oauth.offerSignIn(ann, "docs", async (u) => {
        link = u;
        return true;
      }),
    ).toBe("sent");
    ent.sso.browserUser = "ann@acme.example";
    const back = new URL((await fetch(link, { redirect: "manual" })).headers.get("location")!);
    const done = await oauth.complete(back.searchParams.get("state")!, back.searchParams.get("code")!);
    expect(done).toMatchObject({ ok: true, account: "ann@acme.example" });
    // The IdP's policy refuses her the docs server.
    ent.denied.add("ann@acme.example");

    const ask = (text: string) =>
      hh.slack.event(envelope(mention("C1", "UANN", text, { thread_ts: THREAD })));
    const answered = (text: string) =>
      until(`"${text}"`, () => hh.fake.messages("C1").some((m) => m.text === text));
    const refusals = () => ephemeralsTo(hh, "UANN").filter((t) => t.includes("refused you access"));
    const refusedLine =
      "docs is not available to Ann: their company's sign-in refused them access to it (access_denied)";

    hh.ep.script({
      label: "ann: refused",
      expect: (r) => {
        expect(toolNames(r).some((n) => n.startsWith("docs__"))).toBe(false);
        expect(r.system).toContain(`${refusedLine}; they were told privately.`);
        expect(r.system).not.toContain("docs needs Ann to sign in");
      },
      reply: { text: "Your company does not let you use docs." },
    });
    await ask("what is in docs?");
    await answered("Your company does not let you use docs.");
    // Ann alone, privately: the refusal with the IdP's code; and the account her sign-in connected.
    expect(refusals()).toHaveLength(1);
    expect(refusals()[0]).toContain("Your company's sign-in refused you access to docs (access_denied).");
    expect(ephemeralsTo(hh, "UANN").join()).toContain("Connected to docs as ann@acme.example.");
    expect(hh.fake.callsTo("chat.postEphemeral").every((c) => c.args.user === "UANN")).toBe(true);
    // Still signed in at the IdP: no sign-in link, and `/neo connections` lists her account.
    expect(ephemeralsTo(hh, "UANN").join()).not.toContain("Open the link");
    expect(await neo(hh, "UANN", "connections")).toContain("• `docs` as ann@acme.example");

    // The next turn: the model is told again, Ann is not (once, not every turn). A call to the
    // left-out tool anyway is refused in-band.
    hh.ep.script(
      {
        label: "ann: refused again",
        expect: (r) => {
          expect(toolNames(r).some((n) => n.startsWith("docs__"))).toBe(false);
          expect(r.system).toContain(`${refusedLine}.`);
        },
        reply: { toolCalls: [{ name: "docs__whoami", arguments: {} }] },
      },
      {
        label: "ann: the call refused",
        expect: (r) =>
          expect(lastResult(r)).toContain("is not available to this person now: see the note on docs"),
        reply: { text: "Still no docs for you." },
      },
    );
    await ask("and now?");
    await answered("Still no docs for you.");
    expect(refusals()).toHaveLength(1);

    // The policy lets her in: the next turn has the tool, running as her.
    ent.denied.delete("ann@acme.example");
    let who = "";
    hh.ep.script(
      {
        label: "ann: allowed",
        expect: (r) => expect(toolNames(r)).toContain("docs__whoami"),
        reply: { toolCalls: [{ name: "docs__whoami", arguments: {} }] },
      },
      {
        label: "ann: answers",
        reply: (r) => {
          who = lastResult(r);
          return { text: "You are Ann." };
        },
      },
    );
    await ask("let me in?");
    await answered("You are Ann.");
    expect(who).toBe("sub:ann@acme.example");

    // No ID token or ID-JAG of the exchanges in anything Ann was sent, nor in any log line.
    const secrets = ent.idpRequests.flatMap((r) => [r.subject_token, r.refresh_token]).filter(Boolean);
    secrets.push(...ent.asRequests.map((r) => r.assertion).filter(Boolean));
    expect(secrets.length).toBeGreaterThan(2);
    const seen = [ephemeralsTo(hh, "UANN").join(), logs.raw()].join("\n");
    for (const s of secrets) expect(seen).not.toContain(s);
  });
});
