/**
 * Discord attachments, end to end: a message with attachments (Discord's Attachment object, signed
 * CDN URL; discord.com/developers/docs/resources/message#attachment-object) through the real
 * discord.js client, downloaded from the fake's CDN without the bot token, the real loop and openai
 * SDK against the validating endpoint. Answers stream (a reply edited as it is written), so the
 * answer is waited for as written, by a create or an edit.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type RecordedCall, wrote } from "../fakes/discord/fake-discord.js";
import { PNG } from "../files/support.js";
import { type Rig, startRig, until } from "./support/harness.js";

type Part = { type: string; text?: string; image_url?: { url: string } };
const isCreate = (ch: string) => (c: RecordedCall) =>
  c.method === "POST" && c.path === `/channels/${ch}/messages`;
const contentOf = (c: RecordedCall) => String((c.body as Record<string, unknown>).content ?? "");

describe("Discord attachments", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("a PNG on a mention reaches a vision model as an image part, fetched from the CDN without the bot token", async () => {
    rig = await startRig({ files: { vision: true } });
    const { fake, ep } = rig;
    ep.script({
      expect: (r) => {
        const parts = r.messages[0]!.content as Part[];
        expect(parts[0]!.text).toContain('Alice: what is this?\n[Image "shot.png" (image/png, 70 B, id ');
        // The image decoded and re-encoded by the reader (metadata dropped): a PNG still.
        expect(parts[1]!.type).toBe("image_url");
        expect(parts[1]!.image_url!.url).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
      },
      reply: { text: "One pixel." },
    });
    const att = fake.attachment(fake.channel.id, { name: "shot.png", type: "image/png", body: PNG });
    const m = await fake.say(fake.alice, fake.channel, "what is this?", {
      mentionBot: true,
      extra: { attachments: [att] },
    });
    await fake.waitForCall(wrote("One pixel.", m.id), "answer");
    expect(fake.cdnRequests).toEqual([
      { path: `/attachments/${fake.channel.id}/${att.id}/shot.png`, served: true },
    ]);
    await until("image released", async () => (await rig!.store.keys("files:")).length === 0);
  });

  it("a CSV alone in a DM reaches the model as text", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const dm = fake.dm(fake.alice);
    ep.script({
      expect: (r) => {
        const text = r.messages[0]!.content as string;
        expect(text).toMatch(
          /^\[File "q3.csv" \(text\/csv, 31 B, id \d+\), sha256 [0-9a-f]{12}, its text between the <<<file-([0-9a-f]{16}) and >>>file-\1 lines:\]\n<<<file-\1\nregion,amount\nnorth,12\nsouth,3\n/,
        );
      },
      reply: { text: "Total 15." },
    });
    const att = fake.attachment(dm.id, {
      name: "q3.csv",
      type: "text/csv; charset=utf-8",
      body: Buffer.from("region,amount\nnorth,12\nsouth,3\n"),
    });
    await fake.say(fake.alice, dm, "", { extra: { attachments: [att] } });
    await fake.waitForCall(wrote("Total 15.", dm.id), "answer");
  });

  it("a 50 MB file, an expired link and another channel's file are refused with a message, never requested", async () => {
    rig = await startRig({ files: { vision: true } });
    const { fake, ep } = rig;
    ep.script({ reply: { text: "I could not read those." } });
    const big = fake.attachment(fake.channel.id, {
      name: "dump.csv",
      type: "text/csv",
      body: Buffer.from("a"),
      size: 50 * 1024 * 1024,
    });
    const old = fake.attachment(fake.channel.id, {
      name: "old.png",
      type: "image/png",
      body: PNG,
      expired: true,
    });
    const foreign = fake.attachment("123456789012345678", {
      name: "theirs.png",
      type: "image/png",
      body: PNG,
    });
    const m = await fake.say(fake.alice, fake.channel, "read these", {
      mentionBot: true,
      extra: { attachments: [big, old, foreign] },
    });
    await fake.waitForCall(wrote("I could not read those.", m.id), "answer");
    const said = fake.calls.filter(isCreate(m.id)).map(contentOf).join("\n");
    expect(said).toContain('I could not read "dump.csv": it is 50 MB, more than the 20 MB limit.');
    expect(said).toContain('I could not read "old.png": its link has expired.');
    expect(said).toContain('I could not read "theirs.png": it was posted in another channel.');
    expect(fake.cdnRequests).toEqual([]);
  });
});
