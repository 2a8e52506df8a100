/**
 * The model reads names, not ids, on Discord (issue 15 item 4): through the real discord.js client
 * logged in to the fake gateway and REST, a message's `<@id>` / `<@!id>` become `@Name` (guild
 * members from the client's cache, fetched when missing), `<#id>` `#name`, `<@&id>` `@role`,
 * `<t:unix[:style]>` ISO UTC text, slash-command mentions and custom emoji words; a lookup that
 * fails leaves the id (and a log line). A forwarded message comes with its content and origin.
 *
 * Shapes from Discord's docs: message formatting tokens
 * (https://discord.com/developers/docs/reference#message-formatting), MESSAGE_CREATE's `mentions`
 * (user objects with a partial `member`, https://discord.com/developers/docs/events/gateway-events#message-create),
 * a forward: `message_reference.type` 1 (FORWARD) with `message_snapshots[].message` (type, content,
 * embeds, attachments, timestamp, edited_timestamp, flags, mentions, mention_roles) and flag
 * HAS_SNAPSHOT (1 << 14) (https://discord.com/developers/docs/resources/message#message-snapshot-object,
 * #message-reference-types), attachments as the Attachment object.
 */
import { afterEach, describe, expect, it } from "vitest";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import { wrote } from "../fakes/discord/fake-discord.js";
import { type FakeUser, member, message, snowflake, user } from "../fakes/discord/payloads.js";
import { type Rig, startRig } from "./support/harness.js";

const userTexts = (rig: Rig) =>
  rig.ep.requests.flatMap((r) => r.messages.filter((m) => m.role === "user").map((m) => String(m.content)));

/** A mention as MESSAGE_CREATE carries it: the user, with their partial guild member. */
const mentioned = (u: FakeUser, nick: string | null = null) => {
  const { user: _u, ...partial } = member(u, [], nick);
  return { ...u, member: partial };
};

/** The ISO text of a snowflake's time, to the second. */
const isoOfSnowflake = (id: string) =>
  new Date(Number((BigInt(id) >> 22n) + 1_420_070_400_000n)).toISOString().replace(/\.\d{3}Z$/, "Z");

describe("Discord: readable content", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    setLogLevel("silent");
    setLogSink(() => {});
    await rig?.close();
    rig = undefined;
  });

  it("renders user, channel and role mentions as names, timestamps as ISO UTC; a failed lookup keeps the id", async () => {
    const lines: string[] = [];
    setLogSink((l) => lines.push(l));
    setLogLevel("warn");
    rig = await startRig();
    const { fake, ep } = rig;
    const ghostUser = snowflake();
    const ghostChannel = snowflake();
    const ghostRole = snowflake();
    ep.script({ reply: { text: "Will do." } });
    await fake.gateway.dispatch(
      "MESSAGE_CREATE",
      message({
        channel: fake.channel,
        author: fake.alice,
        member: fake.members.get(fake.alice.id),
        content:
          `<@${fake.bot.id}> ask <@${fake.bob.id}> and <@!${fake.carol.id}> about <#${fake.channel.id}> ` +
          `for <@&${fake.adminRoleId}> by <t:1618953630:R> (<t:1618953630>), tell @everyone and @here; ` +
          `ping <@${ghostUser}> in <#${ghostChannel}> with <@&${ghostRole}>, run </neo status:1180000000000000000> <:party:1180000000000000001>`,
        mentions: [fake.bot, fake.bob, fake.carol],
        extra: {
          mentions: [mentioned(fake.bot), mentioned(fake.bob), mentioned(fake.carol, "Carol the Admin")],
          mention_roles: [fake.adminRoleId],
          mention_everyone: true,
        },
      }),
    );
    await fake.waitForCall(wrote("Will do."), "answer");
    expect(userTexts(rig)).toEqual([
      "Alice: ask @Bob and @Carol the Admin about #general for @admins by 2021-04-20T21:20:30Z " +
        "(2021-04-20T21:20:30Z), tell @everyone and @here; " +
        `ping @${ghostUser} in #${ghostChannel} with @${ghostRole}, run /neo status :party:`,
    ]);
    // The unknown user was looked up (member, then user) and the failure logged, with the id only.
    expect(fake.calls.some((c) => c.method === "GET" && c.path.endsWith(`/members/${ghostUser}`))).toBe(true);
    expect(lines.filter((l) => l.includes("mention") && l.includes(ghostUser)).length).toBeGreaterThan(0);
    expect(lines.some((l) => l.includes(ghostChannel))).toBe(true);
  });

  it("includes a forwarded message with its origin; a member missing from the cache is fetched", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    // Dave is in the guild but not in GUILD_CREATE's members: only REST knows his nickname.
    const dave = user("dave", { globalName: "Dave" });
    fake.addUnlistedMember(dave, "Dave the Dev");
    const dm = fake.dm(fake.alice);
    const originalId = snowflake();
    const log = fake.attachment(fake.channel.id, {
      name: "deploy.log",
      type: "text/plain",
      body: Buffer.from("line 1\nline 2\n"),
    });
    ep.script({ reply: { text: "I see the forwarded deploy note." } });
    await fake.gateway.dispatch(
      "MESSAGE_CREATE",
      message({
        channel: dm,
        author: fake.alice,
        content: "",
        extra: {
          flags: 1 << 14,
          message_reference: {
            type: 1,
            message_id: originalId,
            channel_id: fake.channel.id,
            guild_id: fake.guildId,
          },
          message_snapshots: [
            {
              message: {
                type: 0,
                content: `<@${dave.id}> can you check the deploy before <t:1618953630:t>?`,
                embeds: [],
                attachments: [log],
                timestamp: new Date().toISOString(),
                edited_timestamp: null,
                flags: 0,
                mentions: [dave],
                mention_roles: [],
              },
            },
          ],
        },
      }),
    );
    await fake.waitForCall(wrote("I see the forwarded deploy note."), "answer");
    const link = `https://discord.com/channels/${fake.guildId}/${fake.channel.id}/${originalId}`;
    expect(userTexts(rig)).toEqual([
      `[forwarded message from #general at ${isoOfSnowflake(originalId)} (${link})]\n` +
        "@Dave the Dev can you check the deploy before 2021-04-20T21:20:30Z?\n" +
        "[attached: deploy.log, text/plain, 14 B]",
    ]);
    expect(fake.calls.filter((c) => c.path.endsWith(`/members/${dave.id}`))).toHaveLength(1);
    // A forward is not a reply: the original message is not fetched as one.
    expect(fake.calls.some((c) => c.path.endsWith(`/messages/${originalId}`))).toBe(false);
  });
});
