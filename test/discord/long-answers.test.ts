/**
 * Long answers as files on Discord, through the real discord.js client against the fake: an answer
 * past NEO_ANSWER_FILE_CHARS is uploaded as answer.md (multipart attachment) in the thread with its
 * beginning as the message, even while streamed (the draft stops growing past the limit and is
 * finished with the short message); a large code block goes as a file with its language's
 * extension; a refused upload says the whole answer as split text with a note.
 */
import { afterEach, describe, expect, it } from "vitest";
import { dmConversation } from "../../src/adapters/discord/keys.js";
import { splitMessage } from "../../src/adapters/discord/split.js";
import { UPLOAD_FAILED_NOTE } from "../../src/core/agent/answer-file.js";
import { wrote } from "../fakes/discord/fake-discord.js";
import type { MessagePayload } from "../fakes/discord/payloads.js";
import { botMessages, type Rig, startRig, untilShown } from "./support/harness.js";

const para = (i: number) =>
  `Paragraph ${i}: ${"the rollout plan in detail, step by step. ".repeat(20).trim()}`;
/** 9,000+ characters: past the default 8,000. */
const LONG = Array.from({ length: 12 }, (_, i) => para(i + 1)).join("\n\n");
const CODE = Array.from({ length: 80 }, (_, i) => `print(${i})`).join("\n");
const WITH_CODE = `Here is the script:\n\n\`\`\`python\n${CODE}\n\`\`\`\n\nRun it with python3.`;

const attachmentsOf = (m: MessagePayload) =>
  ((m.attachments as Array<{ filename: string }> | undefined) ?? []).map((a) => a.filename);

describe("Discord: long answers are sent as files", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("a streamed answer past the limit is uploaded as answer.md, the thread keeps its beginning", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    expect(LONG.length).toBeGreaterThan(8000);
    let threadId = "";
    // The last piece waits until the draft shows (an answer finished within the draft's first-write
    // delay is said whole, its file first, like an answer that was not streamed).
    ep.script({
      reply: {
        text: LONG,
        stream: {
          deltas: 20,
          beforeDelta: async (i) => {
            if (i === 19)
              await fake.waitForCall(
                wrote(() => true, threadId),
                "the draft",
              );
          },
        },
      },
    });
    const m = await fake.say(fake.alice, fake.channel, "write the plan", { mentionBot: true });
    threadId = m.id;
    const short = `${para(1).slice(0, para(1).slice(0, 400).lastIndexOf(" "))}…\n\n*(The full answer is attached as answer.md.)*`;
    await untilShown(fake, m.id, [short, ""]);
    expect(botMessages(fake, m.id).map(attachmentsOf)).toEqual([[], ["answer.md"]]);
    expect(fake.uploads.map((u) => [u.channelId, u.filename])).toEqual([[m.id, "answer.md"]]);
    expect(fake.uploads[0]!.bytes.toString("utf8")).toBe(LONG);
    // The draft stopped growing at the message length: the end of the answer was never shown.
    const written = fake.calls
      .filter((c) => c.writesChannel === m.id)
      .map((c) => String((c.body as { content?: unknown }).content ?? ""));
    expect(written.some((t) => t.startsWith("Paragraph 1:"))).toBe(true);
    expect(written.filter((t) => t.includes("Paragraph 12:"))).toEqual([]);
  });

  it("a large code block goes as code.py; the message names it in the block's place", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const dm = fake.dm(fake.alice);
    // The last piece waits until the draft shows.
    ep.script({
      reply: {
        text: WITH_CODE,
        stream: {
          deltas: 3,
          beforeDelta: async (i) => {
            if (i === 2)
              await fake.waitForCall(
                wrote(() => true, dm.id),
                "the draft",
              );
          },
        },
      },
    });
    await fake.say(fake.alice, dm, "write a script");
    // Streamed: the draft (now the message) stands before the file posted beside it.
    await untilShown(fake, dm.id, [
      "Here is the script:\n\n*(python, 80 lines: attached as code.py.)*\n\nRun it with python3.",
      "",
    ]);
    expect(fake.uploads.map((u) => [u.filename, u.bytes.toString("utf8")])).toEqual([
      ["code.py", `${CODE}\n`],
    ]);
  });

  it("/neo ask: a long answer is attached to a follow-up as answer.md, its beginning in the streamed follow-up", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    ep.script({ reply: { text: LONG, stream: { deltas: 20 } } });
    const token = await fake.slash({
      user: fake.alice,
      sub: "ask",
      options: [{ name: "text", type: 3, value: "write the plan" }],
    });
    const short = `${para(1).slice(0, para(1).slice(0, 400).lastIndexOf(" "))}…\n\n*(The full answer is attached as answer.md.)*`;
    await fake.waitForCall(wrote(short), "the short message");
    await fake.waitForCall(
      (c) =>
        c.method === "PATCH" &&
        c.path.endsWith(`/${token}/messages/@original`) &&
        (c.body as { content?: string }).content === "Answered below.",
      "status closed",
    );
    expect(fake.uploads.map((u) => [u.channelId, u.filename])).toEqual([[fake.channel.id, "answer.md"]]);
    expect(fake.uploads[0]!.bytes.toString("utf8")).toBe(LONG);
    // Attached to a follow-up of this interaction, not posted with the bot token.
    const withFile = fake
      .channelMessages(fake.channel.id)
      .find((m) => attachmentsOf(m).includes("answer.md"));
    expect(withFile?.interaction_token).toBe(token);
  });

  it("an answer's file uploaded again under the same key (a resumed turn) is not posted twice", async () => {
    rig = await startRig();
    const { fake } = rig;
    const dm = fake.dm(fake.alice);
    const file = { name: "answer.md", type: "text/markdown", bytes: Buffer.from(LONG) };
    await rig.adapter.io(dmConversation(dm.id)).reporter.upload!([file], "", { id: "turn-1" });
    const first = fake.channelMessages(dm.id).map((m) => m.id);
    expect(first).toHaveLength(1);
    // A new process's reporter uploads the same answer's file again: Discord returns the same message.
    await rig.restartAdapter();
    await rig.adapter.io(dmConversation(dm.id)).reporter.upload!([file], "", { id: "turn-1", resumed: true });
    expect(fake.channelMessages(dm.id).map((m) => m.id)).toEqual(first);
    expect(fake.uploads).toHaveLength(1);
    // Another answer's file is a new message.
    await rig.adapter.io(dmConversation(dm.id)).reporter.upload!([file], "", { id: "turn-2" });
    expect(fake.uploads).toHaveLength(2);
  });

  it("a refused upload says the whole answer as split text, with a note", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    fake.refuseUploads(true);
    ep.script({ reply: { text: LONG, stream: { deltas: 20 } } });
    const dm = fake.dm(fake.alice);
    await fake.say(fake.alice, dm, "write the plan");
    await untilShown(fake, dm.id, splitMessage(`${LONG}\n\n${UPLOAD_FAILED_NOTE}`));
    expect(fake.uploads).toEqual([]);
    expect(fake.calls.some((c) => c.status === 413)).toBe(true);
  });
});
