/** `/neo` on Slack, end to end: signed slash commands into the real Bolt app. */
import { afterEach, describe, expect, it } from "vitest";
import { ephemeralClick, type Harness, slashCommand, startHarness } from "./support/harness.js";

function neo(h: Harness, user: string, text: string, channel = "C1") {
  return h.slack.command(slashCommand(h.fake.baseUrl, user, text, channel));
}

const body = (r: { body: string }) =>
  JSON.parse(r.body) as { response_type?: string; text?: string; blocks?: unknown[] };

describe("/neo on Slack", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("refuses /neo status to a non-admin, ephemerally, saying why", async () => {
    h = await startHarness();
    const res = await neo(h, "UANN", "status");
    expect(res.status).toBe(200);
    const reply = body(res);
    expect(reply.response_type).toBe("ephemeral");
    expect(reply.text).toContain("admins only");
    expect(reply.text).not.toContain("Models");
    // Asked Slack whether Ann is a workspace admin before refusing.
    expect(h.fake.callsTo("users.info").map((c) => c.args.user)).toEqual(["UANN"]);
  });

  it("gives /neo status to a workspace admin (users.info) and to a configured admin id", async () => {
    h = await startHarness({ adminIds: ["UBOB"] });
    const ws = body(await neo(h, "UADMIN", "status"));
    expect(ws.response_type).toBe("ephemeral");
    expect(ws.text).toContain("Models: main `main-model`");
    const cfg = body(await neo(h, "UBOB", "status"));
    expect(cfg.text).toContain("Pending approvals: 0");
  });

  it("answers an unknown subcommand with the help text", async () => {
    h = await startHarness();
    const reply = body(await neo(h, "UANN", "dance"));
    expect(reply.response_type).toBe("ephemeral");
    expect(reply.text).toContain("I don't know `dance`");
    expect(reply.text).toContain("/neo ask");
  });

  it("asks for confirmation before forget, with a button", async () => {
    h = await startHarness();
    const reply = body(await neo(h, "UANN", "forget"));
    expect(JSON.stringify(reply.blocks)).toContain('"action_id":"neo_confirm"');
    expect(JSON.stringify(reply.blocks)).toContain('"value":"forget"');
  });

  it("an admin's /neo forget <user> asks to confirm; the button erases only when an admin presses it", async () => {
    h = await startHarness({ adminIds: ["UBOB"] });
    expect(body(await neo(h, "UANN", "forget <@UBOB>")).text).toMatch(/admins only/);
    const reply = body(await neo(h, "UBOB", "forget <@UANN>"));
    expect(reply.text).toContain("This wipes everything I remember about `slack:T0001:UANN`");
    expect(JSON.stringify(reply.blocks)).toContain('"value":"forget:slack:T0001:UANN"');
    const press = (user: string, n: number) =>
      ephemeralClick(h!, {
        user,
        channel: "C1",
        actionId: "neo_confirm",
        value: "forget:slack:T0001:UANN",
        responseId: `confirm-${n}`,
      });
    const said = (n: number) => h!.fake.responses.find((r) => r.id === `confirm-${n}`)?.body.text;
    // Ann sends the admin's button back as her own click: refused.
    await press("UANN", 1);
    await h.fake.waitFor(() => said(1) !== undefined, "Ann's click answered");
    expect(said(1)).toBe("Only Neo admins can erase another user's memory; nothing was changed.");
    await press("UBOB", 2);
    await h.fake.waitFor(() => said(2) !== undefined, "Bob's click answered");
    expect(said(2)).toMatch(
      /^(Forgotten: \d+ record\(s\) about `slack:T0001:UANN` are gone\.|There was nothing to forget about them\.)$/,
    );
  });

  it("/neo ask posts the question, answers in its thread, and keeps the status ephemeral", async () => {
    h = await startHarness({
      turns: [
        { reply: { toolCalls: [{ name: "lookup", arguments: {} }] } },
        { reply: { text: "The answer is 42." } },
      ],
      tools: { lookup: () => ({ content: "42", isError: false }) },
    });
    const ack = body(await neo(h, "UANN", "ask what is the answer?"));
    expect(ack.response_type).toBe("ephemeral");
    await h.fake.waitFor(
      () => h!.fake.callsTo("chat.postMessage").some((c) => c.args.text === "The answer is 42."),
      "answer",
    );
    await h.fake.waitFor(
      () => h!.fake.responses.some((r) => r.body.delete_original === true),
      "status removed",
    );
    const posts = h.fake.callsTo("chat.postMessage");
    expect(posts.map((p) => p.args.text)).toEqual([
      "<@UANN> asked: what is the answer?",
      "The answer is 42.",
    ]);
    expect(posts[1]!.args.thread_ts).toBe(h.fake.messages("C1")[0]!.ts);
    // Status went to the command's ephemeral reply (response_url), never into the channel.
    const status = h.fake.responses.filter((r) => r.body.replace_original === true);
    expect(status.map((r) => r.body.text)).toContain("_• lookup_");
    expect(h.fake.callsTo("chat.update")).toEqual([]);
  });
});
