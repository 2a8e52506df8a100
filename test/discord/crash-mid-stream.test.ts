/**
 * A crash while an answer is being written, on Discord: the first Neo shows part of the answer (a
 * posted message, or for `/neo ask` an interaction follow-up, edited as text arrives, the last one
 * carrying Stop) and dies before the model has finished (real Redis, the real conversations layer,
 * discord.js against the fake Discord, the real openai SDK against the scripted endpoint, held
 * mid-answer). The next Neo on the same store finds the turn open and runs it again; for `/neo ask`
 * it has no interaction (its token is the dead process's, and expires after 15 minutes), so it
 * answers in the channel with the bot token. The place must end with the final answer exactly once
 * and nothing left of the half-written one (no partial text, no Stop button).
 */
import { afterEach, describe, expect, it } from "vitest";
import { dmConversation, threadConversation } from "../../src/adapters/discord/keys.js";
import type { FakeDiscord } from "../fakes/discord/fake-discord.js";
import type { MessagePayload } from "../fakes/discord/payloads.js";
import { crashAt } from "../support/crash-store.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { botMessages, type Rig, startRig, until } from "./support/harness.js";

const redis = await probeRedis();

const step = (i: number) => `Step ${i}: ${"check the region before the next one goes. ".repeat(8).trim()}`;
const FINAL = "The rollout goes region by region; each one is watched for errors before the next.";

const CASES = [
  // Half of it out: one message, with Stop.
  { name: "one message", first: Array.from({ length: 6 }, (_, i) => step(i + 1)).join("\n\n"), messages: 1 },
  // Past 2,000 characters: the first message full (no Stop), the second one being written.
  {
    name: "two messages",
    first: Array.from({ length: 14 }, (_, i) => step(i + 1)).join("\n\n"),
    messages: 2,
  },
];

/** Where the question is asked, and what of Neo's answer is seen there. */
interface Place {
  /** Neo's messages anyone sees there. */
  shown(): MessagePayload[];
  ask(): Promise<unknown>;
  /** The conversation's log key. */
  log: string;
  /** More about the half-written draft the dead process left. */
  checkDraft?(draft: MessagePayload[]): void;
}

const PLACES: Array<{ name: string; prefix: string; place(fake: FakeDiscord): Place }> = [
  {
    name: "a DM",
    prefix: "discord-crash-mid-stream",
    place: (fake) => {
      const dm = fake.dm(fake.alice);
      return {
        shown: () => botMessages(fake, dm.id),
        ask: () => fake.say(fake.alice, dm, "how does the rollout go?"),
        log: `conv:log:{${dmConversation(dm.id)}}`,
      };
    },
  },
  {
    name: "/neo ask",
    prefix: "discord-crash-mid-stream-ask",
    place: (fake) => {
      const channelId = fake.channel.id;
      return {
        // Bot posts and visible interaction follow-ups.
        shown: () =>
          fake
            .channelMessages(channelId)
            .filter((m) => m.author.id === fake.bot.id && (Number(m.flags ?? 0) & 64) === 0 && !m.original),
        ask: () =>
          fake.slash({
            user: fake.alice,
            sub: "ask",
            options: [{ name: "text", type: 3, value: "how does the rollout go?" }],
          }),
        log: `conv:log:{${threadConversation(fake.guildId, channelId, channelId)}}`,
        // The draft was the interaction's follow-ups.
        checkDraft: (draft) => expect(draft.every((m) => m.webhook_id !== undefined)).toBe(true),
      };
    },
  },
];

const stops = (m: MessagePayload) => JSON.stringify(m.components ?? []).includes("neo:stop:");

describe.skipIf(!redis.ok).each(PLACES)(
  "Discord, $name: a crash while the answer is written (real Redis)",
  (p) => {
    const open: Rig[] = [];
    afterEach(async () => {
      for (const r of open.splice(0).reverse()) await r.close();
    });

    it.each(CASES)("the draft was $name: the resumed turn leaves only its answer", async (c) => {
      const prefix = uniquePrefix(p.prefix);
      let dying = false;
      // The process dies at its first store call once the draft is up (a lease renewal, at the latest).
      const crash = crashAt(() => dying);
      const first = await startRig({ redis: { url: redis.url, prefix }, conversationStore: crash.wrap });
      open.push(first);
      const { fake } = first;
      const place = p.place(fake);
      first.ep.script({
        reply: {
          text: c.first,
          stream: {
            deltas: 10,
            beforeDelta: async (i) => {
              if (i < 6) return;
              // Most of the answer is out and shown; the model never sends the rest to this process.
              await until(
                "the draft's messages",
                () => place.shown().length === c.messages && stops(place.shown().at(-1)!),
              );
              dying = true;
              await new Promise<never>(() => {});
            },
          },
        },
      });
      await place.ask();
      await crash.crashed;
      const before = place.shown();
      expect(before).toHaveLength(c.messages);
      place.checkDraft?.(before);
      expect(stops(before.at(-1)!)).toBe(true);

      // The restart: the same instance id on the same store finds the turn open, without its answer.
      const second = await startRig({ redis: { url: redis.url, prefix }, reuseFake: fake });
      open.push(second);
      second.ep.script({ reply: { text: FINAL, stream: { deltas: 4 } } });
      await until("the resumed turn is closed", async () => {
        const [last] = await second.store.range<{ type: string }>(place.log, -1, -1);
        return last?.type === "turn-end";
      });
      const after = place.shown().map((m) => ({ content: m.content, stop: stops(m) }));
      expect(after).toEqual([{ content: FINAL, stop: false }]);
    });
  },
);
