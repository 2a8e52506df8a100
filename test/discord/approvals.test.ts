/**
 * Spend approvals on Discord: the plan as an embed with Approve/Reject buttons; a click by anyone
 * but the requester gets an ephemeral refusal and changes nothing; the requester's click is
 * acknowledged at once (deferred ephemeral), then the message shows who decided and when, buttons
 * gone, then the outcome with transaction ids; expiry edits it likewise.
 */
import { afterEach, describe, expect, it } from "vitest";
import { discordUser, threadConversation } from "../../src/adapters/discord/keys.js";
import type { Plan } from "../../src/core/approvals/types.js";
import type { RecordedCall } from "../fakes/discord/fake-discord.js";
import { type Rig, startRig } from "./support/harness.js";

const body = (c: RecordedCall) => c.body as Record<string, unknown>;
type Embed = { title: string; description: string; fields: Array<{ name: string; value: string }> };
type Row = { components: Array<{ custom_id: string; label: string }> };

function setup(rig: Rig) {
  const { fake } = rig;
  const conversation = threadConversation(fake.guildId, fake.channel.id, fake.channel.id);
  const requester = { userKey: discordUser(fake.guildId, fake.alice.id), displayName: "Alice" };
  const plan: Plan = {
    id: "plan_1",
    intent: "send 5 USDC to bob",
    summary: "Transfer 5 USDC to 0xB0B",
    actions: [
      {
        tool: "wallet__transfer",
        arguments: { to: "0xB0B", amount: "5", asset: "USDC" },
        spend: { amount: "5", asset: "USDC", recipient: "0xB0B" },
      },
    ],
    requester: requester.userKey,
    createdAt: Date.now(),
  };
  return { conversation, requester, plan, channel: rig.adapter.io(conversation).approvals };
}

async function clickAndWait(rig: Rig, who: typeof rig.fake.alice, customId: string, messageId: string) {
  const { fake } = rig;
  const msg = fake.channelMessages(fake.channel.id).find((m) => m.id === messageId)!;
  const token = await fake.click({ user: who, message: msg, customId });
  const ack = await fake.waitForCall((c) => c.path.endsWith(`/${token}/callback`), "interaction ack");
  const reply = await fake.waitForCall(
    (c) => c.method === "PATCH" && c.path.endsWith(`/${token}/messages/@original`),
    "ephemeral reply",
  );
  return { ack, reply };
}

describe("Discord: approvals", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("shows the plan; another user is refused ephemerally; the requester approves; the outcome is shown", async () => {
    rig = await startRig();
    const { fake, broker } = rig;
    const { conversation, requester, plan, channel } = setup(rig);
    const rec = await broker.request(plan, requester, conversation, channel);
    const waiting = broker.waitForDecision(rec.id);

    const post = await fake.waitForCall(
      (c) => c.method === "POST" && Array.isArray(body(c).embeds),
      "approval post",
    );
    const messageId = (post.response as { id: string }).id;
    expect(rec.messageRef).toBe(`${fake.channel.id}/${messageId}`);
    const embed = (body(post).embeds as Embed[])[0]!;
    expect(embed.title).toBe("Approval needed");
    const text = JSON.stringify(embed);
    for (const s of ["wallet__transfer", "(5 `USDC` → `0xB0B`)", "send 5 USDC to bob", rec.planHash])
      expect(text).toContain(s);
    const buttons = (body(post).components as Row[])[0]!.components;
    expect(buttons.map((b) => b.label)).toEqual(["Approve", "Reject"]);
    for (const b of buttons) {
      expect(b.custom_id.length).toBeLessThanOrEqual(100);
      expect(b.custom_id).toContain(rec.id);
    }
    expect(body(post).allowed_mentions).toEqual({ parse: [], replied_user: false });

    // Bob is not the requester: ephemeral refusal, acknowledged first, nothing changes.
    const bob = await clickAndWait(rig, fake.bob, buttons[0]!.custom_id, messageId);
    expect(body(bob.ack)).toEqual({ type: 5, data: { flags: 64 } });
    expect(bob.ack.seq).toBeLessThan(bob.reply.seq);
    expect(String(body(bob.reply).content)).toMatch(/requested|only/i);
    expect((await broker.get(rec.id))?.status).toBe("pending");
    expect(
      fake.calls.some(
        (c) => c.method === "PATCH" && c.path === `/channels/${fake.channel.id}/messages/${messageId}`,
      ),
    ).toBe(false);

    // Alice approves.
    const alice = await clickAndWait(rig, fake.alice, buttons[0]!.custom_id, messageId);
    expect(body(alice.ack)).toEqual({ type: 5, data: { flags: 64 } });
    expect(String(body(alice.reply).content)).toMatch(/^Approved/);
    const settled = await waiting;
    expect(settled.status).toBe("approved");
    const decidedEdit = await fake.waitForCall(
      (c) => c.method === "PATCH" && c.path === `/channels/${fake.channel.id}/messages/${messageId}`,
      "decided edit",
    );
    const decided = (body(decidedEdit).embeds as Embed[])[0]!;
    expect(decided.title).toBe("Approved");
    expect(body(decidedEdit).components).toEqual([]);
    const decidedField = decided.fields.find((f) => f.name === "Decided")!;
    expect(decidedField.value).toContain(`<@${fake.alice.id}>`);
    expect(decidedField.value).toMatch(/<t:\d+:f>/);

    await broker.complete(rec.id, {
      status: "success",
      results: [{ tool: "wallet__transfer", content: "tx 0xfeedbeef", isError: false }],
      notRun: [],
      txIds: ["0xfeedbeef"],
    });
    const outcomeEdit = await fake.waitForCall(
      (c) => c.method === "PATCH" && c.seq > decidedEdit.seq && c.path.endsWith(`/messages/${messageId}`),
      "outcome edit",
    );
    expect(JSON.stringify(body(outcomeEdit).embeds)).toContain("0xfeedbeef");
    expect(body(outcomeEdit).components).toEqual([]);
  });

  it("expiry edits the message (buttons removed); a late click is refused ephemerally", async () => {
    rig = await startRig({ approvalTtlMs: 300 });
    const { fake, broker } = rig;
    const { conversation, requester, plan, channel } = setup(rig);
    const rec = await broker.request(plan, requester, conversation, channel);
    const post = await fake.waitForCall(
      (c) => c.method === "POST" && Array.isArray(body(c).embeds),
      "approval post",
    );
    const messageId = (post.response as { id: string }).id;
    const settled = await broker.waitForDecision(rec.id);
    expect(settled.status).toBe("expired");
    const edit = await fake.waitForCall(
      (c) => c.method === "PATCH" && c.path === `/channels/${fake.channel.id}/messages/${messageId}`,
      "expiry edit",
    );
    expect((body(edit).embeds as Embed[])[0]!.title).toMatch(/^Expired/);
    expect(body(edit).components).toEqual([]);

    const customId = (body(post).components as Row[])[0]!.components[0]!.custom_id;
    const late = await clickAndWait(rig, fake.alice, customId, messageId);
    expect(String(body(late.reply).content)).toMatch(/expired/i);
    expect((await broker.get(rec.id))?.status).toBe("expired");
  });
});
