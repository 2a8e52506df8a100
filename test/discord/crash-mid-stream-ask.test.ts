/**
 * A crash while a `/neo ask` answer is being written: the first Neo streams the answer into an
 * interaction follow-up (edited as text arrives, the last message carrying Stop) and dies before the
 * model has finished (real Redis, the real conversations layer, discord.js against the fake Discord,
 * the real openai SDK against the scripted endpoint, held mid-answer). The next Neo on the same store
 * finds the turn open and runs it again; it has no interaction (its token is the dead process's, and
 * expires after 15 minutes), so it answers in the channel with the bot token. The channel must end
 * with the final answer exactly once and nothing left of the half-written follow-up.
 */
import { afterEach, describe, expect, it } from "vitest";
import { threadConversation } from "../../src/adapters/discord/keys.js";
import type { MessagePayload } from "../fakes/discord/payloads.js";
import { crashAt } from "../support/crash-store.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type Rig, startRig, until } from "./support/harness.js";

const redis = await probeRedis();

const step = (i: number) => `Step ${i}: ${"check the region before the next one goes. ".repeat(8).trim()}`;
const FINAL = "The rollout goes region by region; each one is watched for errors before the next.";

const CASES = [
  // Half of it out: one follow-up, with Stop.
  { name: "one message", first: Array.from({ length: 6 }, (_, i) => step(i + 1)).join("\n\n"), messages: 1 },
  // Past 2,000 characters: the first follow-up full (no Stop), the second one being written.
  {
    name: "two messages",
    first: Array.from({ length: 14 }, (_, i) => step(i + 1)).join("\n\n"),
    messages: 2,
  },
];

describe.skipIf(!redis.ok)("Discord /neo ask: a crash while the answer is written (real Redis)", () => {
  const open: Rig[] = [];
  afterEach(async () => {
    for (const r of open.splice(0).reverse()) await r.close();
  });

  it.each(CASES)("the draft was $name: the resumed turn leaves only its answer", async (c) => {
    const prefix = uniquePrefix("discord-crash-mid-stream-ask");
    let dying = false;
    // The process dies at its first store call once the draft is up (a lease renewal, at the latest).
    const crash = crashAt(() => dying);
    const first = await startRig({ redis: { url: redis.url, prefix }, conversationStore: crash.wrap });
    open.push(first);
    const { fake } = first;
    const channelId = fake.channel.id;
    const stops = (m: MessagePayload) => JSON.stringify(m.components ?? []).includes("neo:stop:");
    // Neo's messages anyone sees in the channel: bot posts and visible interaction follow-ups.
    const visible = () =>
      fake
        .channelMessages(channelId)
        .filter((m) => m.author.id === fake.bot.id && (Number(m.flags ?? 0) & 64) === 0 && !m.original);
    first.ep.script({
      reply: {
        text: c.first,
        stream: {
          deltas: 10,
          beforeDelta: async (i) => {
            if (i < 6) return;
            // Most of the answer is out and shown; the model never sends the rest to this process.
            await until(
              "the draft's follow-ups",
              () => visible().length === c.messages && stops(visible().at(-1)!),
            );
            dying = true;
            await new Promise<never>(() => {});
          },
        },
      },
    });
    await fake.slash({
      user: fake.alice,
      sub: "ask",
      options: [{ name: "text", type: 3, value: "how does the rollout go?" }],
    });
    await crash.crashed;
    const before = visible();
    expect(before).toHaveLength(c.messages);
    expect(before.every((m) => m.webhook_id !== undefined)).toBe(true);
    expect(stops(before.at(-1)!)).toBe(true);

    // The restart: the same instance id on the same store finds the turn open, without its answer.
    const second = await startRig({ redis: { url: redis.url, prefix }, reuseFake: fake });
    open.push(second);
    second.ep.script({ reply: { text: FINAL, stream: { deltas: 4 } } });
    const log = `conv:log:${threadConversation(fake.guildId, channelId, channelId)}`;
    await until("the resumed turn is closed", async () => {
      const [last] = await second.store.range<{ type: string }>(log, -1, -1);
      return last?.type === "turn-end";
    });
    const after = visible().map((m) => ({ content: m.content, stop: stops(m) }));
    expect(after).toEqual([{ content: FINAL, stop: false }]);
  });
});
