/**
 * A long answer (answer.md plus its beginning as the message) resumed after a crash, on Discord:
 * the first Neo streams it, uploads the file, finishes the message and dies before the turn's end
 * marker reaches the log (real Redis, the real conversations layer, discord.js against the fake
 * Discord); the next Neo on the same store finds the turn open with its answer and posts it again
 * under the same key, marked resumed. Whatever of it the first one got out, the DM ends with
 * exactly one answer.md and one message beside it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { dmConversation } from "../../src/adapters/discord/keys.js";
import { wrote } from "../fakes/discord/fake-discord.js";
import type { MessagePayload } from "../fakes/discord/payloads.js";
import { crashAt, endMarker } from "../support/crash-store.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { botMessages, type Rig, startRig, until } from "./support/harness.js";

const redis = await probeRedis();

const para = (i: number) =>
  `Paragraph ${i}: ${"the rollout plan in detail, step by step. ".repeat(20).trim()}`;
/** 9,000+ characters: past the default NEO_ANSWER_FILE_CHARS (8,000), and five Discord messages as text. */
const LONG = Array.from({ length: 12 }, (_, i) => para(i + 1)).join("\n\n");
const LEAD = `${para(1).slice(0, para(1).slice(0, 400).lastIndexOf(" "))}…\n\n*(The full answer is attached as answer.md.)*`;

const filesOf = (m: MessagePayload) =>
  ((m.attachments as Array<{ filename: string }> | undefined) ?? []).map((a) => a.filename);
/** What the DM shows of the answer: its files and its messages, in order. */
const shown = (messages: MessagePayload[]) =>
  messages.map((m) => (filesOf(m).length ? `file: ${filesOf(m).join(", ")}` : m.content));

/** What the first Neo got out before it died. */
const CASES: Array<{ name: string; lost: (m: MessagePayload) => boolean }> = [
  { name: "after the file and the message", lost: () => false },
  { name: "between the file and the message", lost: (m) => m.content === LEAD },
  { name: "before the file", lost: () => true },
];

describe.skipIf(!redis.ok)("Discord: a long answer resumed after a crash (real Redis)", () => {
  const open: Rig[] = [];
  afterEach(async () => {
    for (const r of open.splice(0).reverse()) await r.close();
  });

  it.each(
    CASES.flatMap((c) => [
      { ...c, late: false, when: "within" },
      { ...c, late: true, when: "after" },
    ]),
  )(
    "died $name, back $when Discord's nonce window: one answer.md and one message",
    async ({ lost, late }) => {
      const prefix = uniquePrefix("discord-resumed-long");
      const crash = crashAt(endMarker);
      const first = await startRig({ redis: { url: redis.url, prefix }, conversationStore: crash.wrap });
      open.push(first);
      const { fake } = first;
      const dm = fake.dm(fake.alice);
      // Streamed, as answers are: the last piece waits until the draft shows.
      first.ep.script({
        reply: {
          text: LONG,
          stream: {
            deltas: 20,
            beforeDelta: async (i) => {
              if (i === 19)
                await fake.waitForCall(
                  wrote(() => true, dm.id),
                  "the draft",
                );
            },
          },
        },
      });
      await fake.say(fake.alice, dm, "write the plan");
      await crash.crashed;
      expect(shown(botMessages(fake, dm.id))).toEqual([LEAD, "file: answer.md"]);
      const messages = fake.channelMessages(dm.id);
      for (const m of botMessages(fake, dm.id).filter(lost)) messages.splice(messages.indexOf(m), 1);
      if (late) fake.nonceWindowPassed();

      // The restart: the same instance id on the same store finds the turn open with its answer.
      const second = await startRig({ redis: { url: redis.url, prefix }, reuseFake: fake });
      open.push(second);
      const log = `conv:log:{${dmConversation(dm.id)}}`;
      await until("the resumed turn is closed", async () => {
        const [last] = await second.store.range<{ type: string }>(log, -1, -1);
        return last?.type === "turn-end";
      });
      const after = shown(botMessages(fake, dm.id));
      expect(after.filter((s) => s === "file: answer.md")).toHaveLength(1);
      expect(after.filter((s) => s !== "file: answer.md")).toEqual([LEAD]);
      expect(second.ep.requests).toHaveLength(0);
    },
  );
});
