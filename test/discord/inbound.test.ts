/**
 * Inbound on Discord: bots (and Neo itself) are ignored with a debug line saying why; a mention that
 * replies to a message brings that message in as context; a mention in a thread Neo has not seen
 * brings the thread's recent human messages in and the conversation stays in that thread; a
 * redelivery of an answered message after a restart is neither lost nor repeated.
 */
import { afterEach, describe, expect, it } from "vitest";
import { threadMarkKey } from "../../src/adapters/discord/message-handler.js";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import { wrote } from "../fakes/discord/fake-discord.js";
import { message } from "../fakes/discord/payloads.js";
import { type Rig, startRig, until } from "./support/harness.js";

const userTexts = (rig: Rig, i: number) =>
  rig.ep.requests[i]!.messages.filter((m) => m.role === "user").map((m) => String(m.content));

describe("Discord: inbound", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    setLogSink((line) => process.stdout.write(line));
    setLogLevel("silent");
    await rig?.close();
    rig = undefined;
  });

  it("ignores bots and Neo's own messages, each with a debug line saying why", async () => {
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    setLogLevel("debug");
    rig = await startRig();
    const { fake } = rig;
    await fake.say(fake.otherBot, fake.channel, "hey neo, do my bidding", { mentionBot: true });
    const own = message({
      channel: fake.channel,
      author: fake.bot,
      content: `<@${fake.bot.id}> talking to myself`,
      mentions: [fake.bot],
    });
    await fake.gateway.dispatch("MESSAGE_CREATE", own);
    await fake.say(fake.alice, fake.channel, "just chatting, no mention");
    await until("three ignore lines", () => lines.filter((l) => l.includes("ignored message")).length >= 3);
    const reasons = lines
      .filter((l) => l.includes("ignored message"))
      .map((l) => JSON.parse(l).reason as string);
    expect(reasons).toEqual(["author is a bot", "message is Neo's own", "no mention of Neo in a channel"]);
    expect(fake.calls.filter((c) => c.method !== "GET")).toEqual([]);
    expect(rig.ep.requests).toHaveLength(0);
  });

  it("a mention replying to a message brings that message in as context", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script({ reply: { text: "Yes, that plan works." } });
    const earlier = await fake.say(fake.bob, fake.channel, "plan: ship on Friday");
    await fake.say(fake.alice, fake.channel, "does this work?", { mentionBot: true, referenced: earlier });
    await fake.waitForCall(wrote("Yes, that plan works."), "answer");
    const [first] = userTexts(rig, 0);
    expect(first).toContain("Bob: plan: ship on Friday");
    expect(first).toContain("does this work?");
  });

  it("a mention in a thread Neo has not seen brings its recent human messages in; the answer stays in that thread", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const thread = await fake.openThread(fake.bob, "release planning");
    await fake.say(fake.bob, thread, "we need a changelog");
    await fake.say(fake.otherBot, thread, "beep: CI passed");
    await fake.say(fake.alice, thread, "and a version bump");
    ep.script({ reply: { text: "Changelog and bump, noted." } }, { reply: { text: "Done." } });
    await fake.say(fake.carol, thread, "can you summarise?", { mentionBot: true });
    await fake.waitForCall(wrote("Changelog and bump, noted.", thread.id), "answer in the thread");
    const [first] = userTexts(rig, 0);
    expect(first).toContain("Bob: we need a changelog\nAlice: and a version bump");
    expect(first).not.toContain("CI passed");
    expect(first).toContain("can you summarise?");
    expect(fake.calls.some((c) => c.path.endsWith("/threads"))).toBe(false);
    // Neo is now part of the thread: no mention needed.
    await fake.say(fake.bob, thread, "thanks, ship it");
    await fake.waitForCall(wrote("Done.", thread.id), "follow-up");
  });

  it("each human message of a thread enters the transcript once: joined once, follow-ups as they come, and a re-join reads only what is new", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const thread = await fake.openThread(fake.bob, "migration");
    await fake.say(fake.bob, thread, "d01 the migration timed out");
    await fake.say(fake.alice, thread, "d02 on the big shard only");
    ep.script(
      { reply: { text: "Joined." } },
      { reply: { text: "Follow-up." } },
      { reply: { text: "Again." } },
    );
    await fake.say(fake.carol, thread, "d03 why?", { mentionBot: true });
    await fake.waitForCall(wrote("Joined.", thread.id), "answer on joining");
    await fake.say(fake.bob, thread, "d04 it rewrites the index");
    await fake.waitForCall(wrote("Follow-up.", thread.id), "follow-up answer");
    // The thread's mark is gone (expired) while its transcript stays: a new mention joins again,
    // and must bring in only what the transcript does not hold.
    await rig.store.delete(threadMarkKey(thread.id));
    await fake.say(fake.alice, thread, "d05 so what now?", { mentionBot: true });
    await fake.waitForCall(wrote("Again.", thread.id), "answer after re-joining");
    const last = JSON.stringify(ep.requests.at(-1)!.messages);
    for (const marker of ["d01", "d02", "d03", "d04", "d05"]) {
      expect(last.split(marker).length - 1, `${marker} in the last request`).toBe(1);
    }
  });

  it("a gateway resume that replays an answered message does not repeat it", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script({ reply: { text: "Only once." } });
    const mention = await fake.say(fake.alice, fake.channel, "say it once", { mentionBot: true });
    await fake.waitForCall(wrote("Only once."), "answer");
    fake.gateway.dropConnections();
    await until("the client resumed", () => fake.gateway.resumes >= 1);
    await fake.gateway.dispatch("MESSAGE_CREATE", mention);
    ep.script({ reply: { text: "Next." } });
    await fake.say(fake.alice, fake.channelById(mention.id)!, "next question");
    await fake.waitForCall(wrote("Next."), "next answer");
    expect(ep.requests).toHaveLength(2);
    expect(fake.calls.filter((c) => c.path.endsWith("/threads"))).toHaveLength(1);
    expect(fake.channelMessages(mention.id).filter((m) => m.content === "Only once.")).toHaveLength(1);
  });

  it("a redelivered mention after a restart is neither answered again nor given a second thread", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script({ reply: { text: "Once." } });
    const mention = await fake.say(fake.alice, fake.channel, "answer me once", { mentionBot: true });
    await fake.waitForCall(wrote("Once."), "answer");
    await rig.restartAdapter();
    // The gateway replays the same event to the new process (empty caches).
    await fake.gateway.dispatch("MESSAGE_CREATE", mention);
    const refused = await fake.waitForCall(
      (c) => c.path.endsWith("/threads") && c.status === 400,
      "second thread refused",
    );
    expect(refused.response).toMatchObject({ code: 160004 });
    // Let the redelivery reach the journal, then check nothing ran.
    await until("the journal dropped the redelivery", () => rig!.conversations.stats().running === 0);
    ep.script({ reply: { text: "Twice?" } });
    await fake.say(fake.alice, fake.channelById(mention.id)!, "and now a real follow-up");
    await fake.waitForCall(wrote("Twice?"), "follow-up answer");
    expect(fake.channelMessages(mention.id).filter((m) => m.content === "Once.")).toHaveLength(1);
    expect(ep.requests).toHaveLength(2);
    expect(userTexts(rig, 1).filter((t) => t.includes("answer me once"))).toHaveLength(1);
  });
});
