/**
 * No gateway payload takes the process down. An INTERACTION_CREATE in the documented Gateway v8
 * shape (discord-api-types `payloads/v8/_interactions/base.d.ts`, APIBaseInteraction: id,
 * application_id, type, data, guild_id, channel_id, member, token, version 1, locale; none of the
 * fields added since: `app_permissions`, `entitlements`, the `channel` object, `context`) makes
 * discord.js 14 throw inside its packet handler (it reads `data.entitlements.reduce`); the real
 * client against the fake gateway must survive it, say so once, count it, tell the clicker, and
 * keep answering, on Discord and on Slack in the same process. A click on a button Neo no longer
 * knows is answered at once with an ephemeral (interaction callback type 4, flags 64).
 */
import { afterEach, describe, expect, it } from "vitest";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import { metrics } from "../../src/ops/metrics.js";
import { type RecordedCall, wrote } from "../fakes/discord/fake-discord.js";
import { message, snowflake } from "../fakes/discord/payloads.js";
import { envelope, type Harness, mention, startHarness, userTs } from "../slack/support/harness.js";
import { type Rig, startRig } from "./support/harness.js";

const body = (c: RecordedCall) => c.body as Record<string, unknown>;

/** A `/neo status` as a Gateway v8 bot received it in 2021. */
function v8Interaction(rig: Rig): Record<string, unknown> {
  const { fake } = rig;
  const m = fake.members.get(fake.alice.id)!;
  return {
    id: snowflake(),
    application_id: fake.appId,
    type: 2,
    data: { id: snowflake(), name: "neo", type: 1, options: [{ name: "status", type: 1 }] },
    guild_id: fake.guildId,
    channel_id: fake.channel.id,
    member: { ...m, permissions: "2147483647" },
    token: `itok_v8_${snowflake()}`,
    version: 1,
    locale: "en-US",
    guild_locale: "en-US",
  };
}

const failures = async (kind: string): Promise<number> =>
  (await metrics.eventErrors.get()).values.find(
    (v) => v.labels.platform === "discord" && v.labels.kind === kind,
  )?.value ?? 0;

describe("Discord: odd payloads", () => {
  let rig: Rig | undefined;
  let slack: Harness | undefined;
  afterEach(async () => {
    setLogSink((line) => process.stdout.write(line));
    setLogLevel("silent");
    await rig?.close();
    await slack?.close();
    rig = undefined;
    slack = undefined;
  });

  it("an old-shape INTERACTION_CREATE: logged once, counted, the clicker told, the next message answered", async () => {
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    setLogLevel("warn");
    rig = await startRig();
    const { fake, ep } = rig;
    const before = await failures("INTERACTION_CREATE");
    const first = v8Interaction(rig);
    await fake.gateway.dispatch("INTERACTION_CREATE", first);
    await fake.gateway.dispatch("INTERACTION_CREATE", v8Interaction(rig));
    // The person who ran the command hears at once that it could not be read.
    const told = await fake.waitForCall(
      (c) => c.path.endsWith(`/${String(first.token)}/callback`),
      "ephemeral for the unreadable interaction",
    );
    expect(body(told)).toMatchObject({ type: 4, data: { flags: 64 } });
    ep.script({ reply: { text: "Still here." } });
    await fake.say(fake.alice, fake.dm(fake.alice), "are you alive?");
    await fake.waitForCall(wrote("Still here."), "answer");
    expect((await failures("INTERACTION_CREATE")) - before).toBe(2);
    const said = lines.filter((l) => l.includes("payload handling failed"));
    expect(said).toHaveLength(1);
    expect(JSON.parse(said[0]!)).toMatchObject({ platform: "discord", kind: "INTERACTION_CREATE" });
  });

  it("the same process still answers Slack after the odd Discord payload", async () => {
    rig = await startRig();
    slack = await startHarness({ turns: [{ reply: { text: "Slack still works." } }] });
    await rig.fake.gateway.dispatch("INTERACTION_CREATE", v8Interaction(rig));
    const ts = userTs();
    expect((await slack.slack.event(envelope(mention("C1", "UANN", "ping", { ts })))).status).toBe(200);
    await slack.fake.waitFor(
      () => slack!.fake.callsTo("chat.postMessage").some((c) => c.args.text === "Slack still works."),
      "Slack answer",
    );
  });

  it("a button Neo no longer knows gets the ephemeral 'no longer active' at once", async () => {
    rig = await startRig();
    const { fake } = rig;
    const old = message({
      channel: fake.channel,
      author: fake.bot,
      content: "an old message",
      extra: {
        components: [
          { type: 1, components: [{ type: 2, style: 1, label: "Go", custom_id: "legacy:do-thing" }] },
        ],
      },
    });
    fake.store(fake.channel.id, old);
    const token = await fake.click({ user: fake.alice, message: old, customId: "legacy:do-thing" });
    const ack = await fake.waitForCall((c) => c.path.endsWith(`/${token}/callback`), "ack");
    expect(body(ack)).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(String((body(ack).data as Record<string, unknown>).content)).toMatch(/no longer active/);
  });
});
