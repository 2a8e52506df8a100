/**
 * Memory scopes on Discord, end to end (DESIGN.md, Memory scopes): a real discord.js Client against
 * the fake Discord, the real conversations layer and loop, the real memory over a real Redis store,
 * `memory_recall` through the real tool surface. Two people, three places: Alice's DM, `#staff`
 * (a guild channel @everyone may not view: private) and `#general` (public); a mention in a channel
 * opens a thread there, which is as private as its channel.
 *
 * What Alice says in her DM reaches her DM turns and no channel turn; what she says in #staff reaches
 * #staff and her DM, never #general; "remember this everywhere" widens a fact to every place; Bob
 * never sees any of Alice's. One Discord person has one memory across DMs and guilds.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MEMORY_RECALL_TOOL } from "../../src/core/tools/types.js";
import type { ChannelPayload, FakeUser } from "../fakes/discord/payloads.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import type { ScriptedRequest, ScriptedTurn } from "../support/scripted-openai.js";
import { type Rig, startRig, until } from "./support/harness.js";

const redis = await probeRedis();

const SALARY = "SALARY-7731";
const CODENAME = "PRIV-4242";

const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";
/** The cheap model's write-back answer for a one-conversation prompt. */
const writeback = (entry: object) => JSON.stringify({ conversations: [{ conversation: 1, ...entry }] });
const userFacts = (...facts: string[]) => writeback({ user_facts: facts });

describe.skipIf(!redis.ok)("Discord memory by place, two people, three places", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  /** One message, its turn answered with `turns`, its write-back with `writeback`; waits for both. */
  async function step(
    who: FakeUser,
    channel: ChannelPayload,
    text: string,
    turns: ScriptedTurn[],
    writeback = "{}",
  ) {
    const r = rig!;
    const before = r.memory!.stats().processed;
    r.ep.script(...turns, { label: "write-back", match: isWriteback, reply: { text: writeback } });
    await r.fake.say(who, channel, text, { mentionBot: channel.type !== 1 });
    await until("write-back", () => r.memory!.stats().processed > before, 30_000);
  }

  const recallTurn = (label: string, query: string, check: (system: string, recalled: string) => void) => {
    let system = "";
    return [
      {
        label: `${label}: asks memory_recall`,
        match: isTurn,
        expect: (r) => {
          system = r.system;
        },
        reply: { toolCalls: [{ name: MEMORY_RECALL_TOOL, arguments: { query } }] },
      },
      {
        label: `${label}: answers`,
        match: isTurn,
        expect: (r) => {
          const result = r.messages.at(-1)!;
          expect(result.role).toBe("tool");
          check(system, String(result.content));
        },
        reply: { text: "Done." },
      },
    ] satisfies ScriptedTurn[];
  };

  it("shows a DM fact only in DMs, a private-channel fact only in private places, widened facts everywhere", async () => {
    rig = await startRig({
      fake: { privateChannel: true },
      memory: true,
      redis: { url: redis.url, prefix: uniquePrefix("discord-places") },
    });
    const { fake } = rig;
    const aliceDm = fake.dm(fake.alice);
    const bobDm = fake.dm(fake.bob);
    const staff = fake.staffChannel!;
    const general = fake.channel;

    await step(
      fake.alice,
      aliceDm,
      `my salary code is ${SALARY}, keep it to yourself`,
      [{ label: "alice dm tells", match: isTurn, reply: { text: "Noted." } }],
      userFacts(`Alice's salary code is ${SALARY}.`),
    );
    await step(
      fake.alice,
      staff,
      `our team codename is ${CODENAME}`,
      [
        {
          label: "alice staff tells",
          match: isTurn,
          expect: (r) => expect(r.system).not.toContain(SALARY),
          reply: { text: "Got it." },
        },
      ],
      userFacts(`Alice's team codename is ${CODENAME}.`),
    );
    await step(
      fake.alice,
      aliceDm,
      "what do you remember about my salary code and team codename?",
      recallTurn("alice dm recalls", "salary code team codename", (system, recalled) => {
        expect(system).toContain(SALARY);
        expect(system).toContain(CODENAME);
        expect(recalled).toContain(SALARY);
        expect(recalled).toContain(CODENAME);
      }),
    );
    await step(
      fake.alice,
      staff,
      "what is my salary code and team codename?",
      recallTurn("alice staff recalls", "salary code team codename", (system, recalled) => {
        expect(system).toContain(CODENAME);
        expect(recalled).toContain(CODENAME);
        expect(system + recalled).not.toContain(SALARY);
      }),
    );
    await step(
      fake.alice,
      general,
      "what is my salary code and team codename?",
      recallTurn("alice general recalls", "salary code team codename", (system, recalled) => {
        expect(system + recalled).not.toContain(SALARY);
        expect(system + recalled).not.toContain(CODENAME);
      }),
    );
    await step(
      fake.bob,
      bobDm,
      "what is Alice's salary code and team codename?",
      recallTurn("bob dm recalls", "Alice salary code team codename", (system, recalled) => {
        expect(system + recalled).not.toMatch(/SALARY-7731|PRIV-4242/);
      }),
    );
    await step(
      fake.alice,
      aliceDm,
      "my pronouns are she/her, remember this everywhere",
      [{ label: "alice widens", match: isTurn, reply: { text: "I'll remember that everywhere." } }],
      writeback({ user_facts: ["Alice's pronouns are she/her."], remember_everywhere: true }),
    );
    await step(
      fake.alice,
      general,
      "what are my pronouns?",
      recallTurn("alice general after widening", "pronouns", (system, recalled) => {
        expect(system).toContain("she/her");
        expect(recalled).toContain("she/her");
        expect(system + recalled).not.toMatch(/SALARY-7731|PRIV-4242/);
      }),
    );
  });
});
