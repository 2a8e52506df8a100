/**
 * An MCP server's question on Discord, end to end: a real fixture server elicits during a tool
 * call; the question goes by DM to the requester only (a mention turn has no ephemeral message);
 * Answer… opens a modal (interaction callback type 9, checked against Discord's modal limits by the
 * fake) and the modal submit (type 5) goes through the real discord.js Client. Another user's click
 * or submit is refused; a bad value is told and the form stays open; the requester's answer reaches
 * the server, and a decline is reported to the model.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { formMessage, formModal } from "../../src/adapters/discord/forms.js";
import { discordUser, threadConversation } from "../../src/adapters/discord/keys.js";
import type { FormField } from "../../src/core/tools/elicitation.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import type { MessagePayload } from "../fakes/discord/payloads.js";
import { fixture, testContext } from "../tools/helpers.js";
import { type Rig, startRig, until } from "./support/harness.js";

let surface: McpToolSurface;
beforeAll(async () => {
  surface = await createToolSurface({
    manifest: parseManifest({ servers: { desk: fixture("elicits") } }),
    resultMaxChars: 2000,
    callTimeoutMs: 20_000,
  });
});
afterAll(async () => {
  await surface.close();
});

/** The latest message in a channel (a bot message or an interaction's reply). */
function last(rig: Rig, channelId: string): MessagePayload | undefined {
  return rig.fake.channelMessages(channelId).at(-1);
}

function customIds(m: MessagePayload): string[] {
  const rows = (m.components ?? []) as Array<{ components: Array<{ custom_id?: string }> }>;
  return rows.flatMap((r) => r.components.flatMap((c) => (c.custom_id ? [c.custom_id] : [])));
}

describe("Discord forms (MCP elicitation)", () => {
  let rig: Rig | null = null;
  afterEach(async () => {
    await rig?.close();
    rig = null;
  });

  async function ask(): Promise<{ result: Promise<string>; form: MessagePayload; dm: string }> {
    rig = await startRig();
    const { fake } = rig;
    const conversation = threadConversation(fake.guildId, fake.channel.id, fake.channel.id);
    const ctx = {
      ...testContext(),
      conversation,
      speaker: { userKey: discordUser(fake.guildId, fake.alice.id), displayName: "Alice" },
      forms: rig.adapter.io(conversation).forms,
    };
    const result = surface.dispatch("desk__book_table", {}, ctx).then((r) => r.content);
    await until("the question reaches Alice", () =>
      fake.dmWith(fake.alice) ? !!last(rig!, fake.dmWith(fake.alice)!.id) : false,
    );
    const dm = fake.dmWith(fake.alice)!.id;
    expect(fake.dmWith(fake.bob)).toBeUndefined();
    expect(fake.channelMessages(fake.channel.id)).toHaveLength(0);
    return { result, form: last(rig, dm)!, dm };
  }

  it("only the requester opens and submits the modal; a bad value keeps it open; the answer reaches the server", async () => {
    const { result, form, dm } = await ask();
    const { fake } = rig!;
    expect(form.content).toBe('**Server "desk" asks:** Who is the table for?');
    const [open, decline, skip] = customIds(form);
    expect([decline, skip].map((id) => id!.split(":")[2])).toEqual(["decline", "cancel"]);

    const bobOpens = await fake.click({ user: fake.bob, message: form, customId: open! });
    await until(
      "Bob is refused",
      () => last(rig!, dm)?.content === "Only the person who asked can answer this question.",
    );
    expect(fake.modalShown(bobOpens)).toBeUndefined();

    const aliceOpens = await fake.click({ user: fake.alice, message: form, customId: open! });
    await until("the modal is shown", () => fake.modalShown(aliceOpens) !== undefined);
    const modal = fake.modalShown(aliceOpens)!;
    expect(modal.title).toBe('Server "desk" asks');
    const inputs = (modal.components as Array<{ components: Array<Record<string, unknown>> }>).map(
      (r) => r.components[0]!,
    );
    expect(inputs.map((t) => [t.custom_id, t.label, t.value ?? "", t.required])).toEqual([
      ["name", "Name", "", true],
      ["party", "Party size", "2", false],
      ["terrace", "Terrace", "no", false],
      ["time", "Time", "19:00", false],
    ]);
    const submit = modal.custom_id as string;

    const entered = { name: "Alice", party: "4", terrace: "yes", time: "20:30" };
    await fake.submitModal({ user: fake.bob, message: form, customId: submit, values: entered });
    await until(
      "Bob's submit is refused",
      () => fake.channelMessages(dm).filter((m) => m.content.startsWith("Only the person")).length === 2,
    );

    await fake.submitModal({
      user: fake.alice,
      message: form,
      customId: submit,
      values: { ...entered, party: "many" },
    });
    await until(
      "the bad value is told",
      () =>
        last(rig!, dm)?.content ===
        '"Party size" must be a whole number; the question is still open: press Answer… again.',
    );

    await fake.submitModal({ user: fake.alice, message: form, customId: submit, values: entered });
    expect(await result).toBe('accept: {"name":"Alice","party":4,"terrace":true,"time":"20:30"}');
  });

  it("a decline reaches the server and the model is told", async () => {
    const { result, form } = await ask();
    const [, decline] = customIds(form);
    await rig!.fake.click({ user: rig!.fake.alice, message: form, customId: decline! });
    expect(await result).toBe(
      'decline: {}\n[Alice declined the question "Who is the table for?" from server "desk"]',
    );
  });

  it("in a /neo ask turn the question is an ephemeral follow-up; the decline reaches the model", async () => {
    rig = await startRig({ servers: { desk: fixture("elicits") } });
    const { fake, ep } = rig;
    ep.script(
      { reply: { toolCalls: [{ name: "desk__book_table", arguments: {} }] } },
      { reply: { text: "No table then." } },
    );
    await fake.slash({
      user: fake.alice,
      sub: "ask",
      options: [{ name: "text", type: 3, value: "book it" }],
    });
    const asked = () =>
      fake.channelMessages(fake.channel.id).find((m) => m.content.startsWith('**Server "desk" asks:**'));
    await until("the ephemeral question", () => asked() !== undefined);
    const form = asked()!;
    expect(Number(form.flags) & 64).toBe(64); // EPHEMERAL
    expect(fake.dmWith(fake.alice)).toBeUndefined();
    await fake.click({ user: fake.alice, message: form, customId: customIds(form)[1]! });
    const second = await ep.waitForRequest(2);
    expect(JSON.stringify(second.messages)).toContain(
      'decline: {}\\n[Alice declined the question \\"Who is the table for?\\" from server \\"desk\\"]',
    );
  });

  it("a schema beyond a modal's 5 inputs: 5 are asked, the rest named in the message, labels cut to 45", () => {
    const fields: FormField[] = Array.from({ length: 7 }, (_, n) => ({
      name: `f${n}`,
      label: `Field ${n} ${"x".repeat(60)}`,
      type: "string",
      required: false,
    }));
    const q = {
      mode: "form" as const,
      server: "a-server-with-a-rather-long-name",
      message: "Fill in",
      fields,
    };
    const id = "00000000-0000-4000-8000-000000000000";
    const modal = formModal(id, q);
    expect(modal.components).toHaveLength(5);
    expect(modal.title.length).toBeLessThanOrEqual(45);
    expect(
      modal.components.every(
        (r) => (r as { components: { label: string }[] }).components[0]!.label.length === 45,
      ),
    ).toBe(true);
    expect(formMessage(id, q).content).toContain(
      `"${fields[5]!.label}", "${fields[6]!.label}" cannot be asked here`,
    );
  });
});
