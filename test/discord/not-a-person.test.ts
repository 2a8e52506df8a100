/**
 * Only people talking to Neo get answers on Discord: other bots and system messages (a member
 * joining, a pin notice) reach the real discord.js client and get no model call; a bot listed in
 * NEO_ANSWER_BOTS is answered like a person.
 *
 * Message types from discord-api-types v10 `MessageType` (UserJoin = 7, ChannelPinnedMessage = 6);
 * bot authors carry `author.bot: true` (APIUser), as Discord's Message object documents.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type RecordedCall, wrote } from "../fakes/discord/fake-discord.js";
import { message } from "../fakes/discord/payloads.js";
import { type Rig, startRig } from "./support/harness.js";

const _body = (c: RecordedCall) => c.body as Record<string, unknown>;
const userTexts = (rig: Rig) =>
  rig.ep.requests.flatMap((r) => r.messages.filter((m) => m.role === "user").map((m) => String(m.content)));

describe("Discord: what is not a person talking to Neo gets no answer", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("bots and system messages that mention Neo: no model call", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const dm = fake.dm(fake.alice);
    await fake.say(fake.otherBot, fake.channel, "bot-xyz do my bidding", { mentionBot: true });
    for (const type of [7, 6]) {
      await fake.gateway.dispatch(
        "MESSAGE_CREATE",
        message({
          channel: fake.channel,
          author: fake.alice,
          content: `<@${fake.bot.id}> system-xyz`,
          mentions: [fake.bot],
          extra: { type },
        }),
      );
    }
    ep.script({ reply: { text: "Hello Alice." } });
    await fake.say(fake.alice, dm, "hello?");
    await fake.waitForCall(wrote("Hello Alice."), "answer");
    expect(ep.requests).toHaveLength(1);
    expect(userTexts(rig).join("\n")).not.toMatch(/xyz/);
  });

  it("a bot listed in NEO_ANSWER_BOTS is answered like a person", async () => {
    rig = await startRig({ answerBots: (f) => [f.otherBot.id] });
    const { fake, ep } = rig;
    ep.script({ reply: { text: "On it, helper." } });
    await fake.say(fake.otherBot, fake.channel, "please summarise the build", { mentionBot: true });
    await fake.waitForCall(wrote("On it, helper."), "answer");
    expect(userTexts(rig).join("\n")).toContain("please summarise the build");
  });
});
