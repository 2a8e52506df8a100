/**
 * A mention in a channel opens a thread and is answered there: typing while the turn runs, one
 * status line created then edited as tools run, removed when the answer lands. A follow-up in the
 * thread needs no mention. Every message create/edit carries allowed_mentions { parse: [] }.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type RecordedCall, wrote } from "../fakes/discord/fake-discord.js";
import { type Rig, startRig } from "./support/harness.js";

const isCreate = (ch: string) => (c: RecordedCall) =>
  c.method === "POST" && c.path === `/channels/${ch}/messages`;
const body = (c: RecordedCall) => c.body as Record<string, unknown>;

describe("Discord: mention → thread", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("opens a thread on the message, types, shows and edits a status line, removes it, answers there; a follow-up needs no mention", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script(
      {
        label: "first tool",
        reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "one" } }] },
      },
      {
        label: "second tool",
        reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "two" } }] },
      },
      { label: "answer", reply: { text: "Both gates are open." } },
    );
    rig.openGate("two");
    const mention = await fake.say(fake.alice, fake.channel, "open the gates please", { mentionBot: true });

    const thread = await fake.waitForCall(
      (c) => c.method === "POST" && c.path === `/channels/${fake.channel.id}/messages/${mention.id}/threads`,
      "thread start",
    );
    expect(body(thread).name).toBe("open the gates please");
    const threadId = mention.id;
    await fake.waitForCall((c) => c.method === "POST" && c.path === `/channels/${threadId}/typing`, "typing");
    const statusCreate = await fake.waitForCall(
      (c) => isCreate(threadId)(c) && String(body(c).content).includes("gate__wait_for_gate"),
      "status line",
    );
    // The turn is held inside the first tool call: the status line is up, no answer yet.
    expect(fake.calls.filter(isCreate(threadId))).toHaveLength(1);
    rig.openGate("one");

    const answer = await fake.waitForCall(wrote("Both gates are open.", threadId), "answer");
    const statusId = (statusCreate.response as { id: string }).id;
    const edit = await fake.waitForCall(
      (c) => c.method === "PATCH" && c.path === `/channels/${threadId}/messages/${statusId}`,
      "status edit",
    );
    const removal = await fake.waitForCall(
      (c) => c.method === "DELETE" && c.path === `/channels/${threadId}/messages/${statusId}`,
      "status removal",
    );
    expect(edit.seq).toBeGreaterThan(statusCreate.seq);
    expect(removal.seq).toBeGreaterThan(answer.seq);
    // What is left in the thread: only the answer.
    expect(fake.channelMessages(threadId).map((m) => m.content)).toEqual(["Both gates are open."]);
    // The model saw the speaker's name and the text without the mention.
    expect(ep.requests[0]!.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "Alice: open the gates please",
    ]);

    // Follow-up in the thread, no mention.
    ep.script({ label: "follow-up", reply: { text: "Still open." } });
    const thr = fake.channelById(threadId)!;
    await fake.say(fake.bob, thr, "are they still open?");
    await fake.waitForCall(wrote("Still open.", threadId), "follow-up answer");
    const users = ep.requests
      .at(-1)!
      .messages.filter((m) => m.role === "user")
      .map((m) => m.content);
    expect(users.at(-1)).toBe("Bob: are they still open?");
    // Only one thread was ever opened.
    expect(fake.calls.filter((c) => c.path.endsWith("/threads"))).toHaveLength(1);

    for (const c of fake.calls.filter(
      (c) => ["POST", "PATCH"].includes(c.method) && c.path.includes("/messages"),
    )) {
      if (c.path.endsWith("/threads")) continue;
      expect(body(c).allowed_mentions).toEqual({ parse: [], replied_user: false });
    }
  });
});

describe("Discord: progress only for a wait that needs it", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("a turn that calls a tool and answers within a second posts no status line, only the answer", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    rig.openGate("quick");
    ep.script(
      { reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "quick" } }] } },
      { reply: { text: "Done quickly." } },
    );
    const mention = await fake.say(fake.alice, fake.channel, "be quick", { mentionBot: true });
    await fake.waitForCall(wrote("Done quickly.", mention.id), "answer");
    // The status line would have been posted at the tool call, and deleted after the answer.
    expect(fake.calls.filter(isCreate(mention.id)).map((c) => String(body(c).content))).toEqual([
      "Done quickly.",
    ]);
    expect(
      fake.calls.filter((c) => c.method === "DELETE" && c.path.startsWith(`/channels/${mention.id}/`)),
    ).toEqual([]);
  });
});

describe("Discord: a message while a turn runs", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("is acknowledged with a reaction; the requester's joins the running turn, another person's gets its own, never dropped", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script(
      { reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "hold" } }] } },
      { reply: { text: "First done." } },
      { reply: { text: "Your item is added." } },
    );
    const mention = await fake.say(fake.alice, fake.channel, "start the long job", { mentionBot: true });
    await fake.waitForCall(
      (c) => c.method === "POST" && String(body(c).content).includes("gate__wait_for_gate"),
      "status",
    );
    const thread = fake.channelById(mention.id)!;
    const more = await fake.say(fake.alice, thread, "and make it quick");
    const queued = await fake.say(fake.bob, thread, "and add my item too");
    for (const m of [more, queued]) {
      await fake.waitForCall(
        (c) => c.method === "PUT" && c.path === `/channels/${thread.id}/messages/${m.id}/reactions/👀/@me`,
        `queued reaction on ${m.content}`,
      );
    }
    rig.openGate("hold");
    // Alice's own message joins her turn at its next cancellation point (after the tool result);
    // Bob's waits for a turn of his own (one turn, one speaker).
    await fake.waitForCall(wrote("First done.", thread.id), "Alice's answer");
    await fake.waitForCall(wrote("Your item is added.", thread.id), "Bob's answer");
    const users = (i: number) =>
      ep.requests[i]!.messages.filter((m) => m.role === "user").map((m) => String(m.content));
    expect(users(1).join("\n")).toContain("Alice: and make it quick");
    expect(users(1).join("\n")).not.toContain("and add my item too");
    expect(
      users(2)
        .join("\n")
        .match(/Bob: and add my item too/g),
    ).toHaveLength(1);
  });
});
