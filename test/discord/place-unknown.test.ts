/**
 * A Discord place Neo cannot classify from what the gateway gave it (issue 30, item 3: no REST
 * call on the answer's path): `/neo ask` in a thread whose parent channel the client has not cached
 * (a thread is as private as its parent). The turn
 * reads as `public` (shown the least memory), and what it teaches is kept as learned in a private
 * place, since the channel may be private: it is never shown in a public channel. The real
 * discord.js client against the fake Discord, the real loop and memory over a real Redis.
 *
 * Shapes: INTERACTION_CREATE type 2 with `channel` (a partial channel,
 * https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object), a
 * public thread (type 11) whose `parent_id` names a channel never sent in GUILD_CREATE.
 */
import { afterEach, describe, expect, it } from "vitest";
import { snowflake, threadChannel } from "../fakes/discord/payloads.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { type Rig, startRig, until } from "./support/harness.js";

const redis = await probeRedis();
const BADGE = "BADGE-77";
const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";
const userFacts = (...facts: string[]) =>
  JSON.stringify({ conversations: [{ conversation: 1, user_facts: facts }] });

describe.skipIf(!redis.ok)("Discord: a channel Neo cannot classify", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("/neo ask there reads as public, and what it teaches never reaches a public channel", async () => {
    rig = await startRig({
      memory: true,
      redis: { url: redis.url, prefix: uniquePrefix("discord-unknown-place") },
    });
    const r = rig;
    const { fake } = r;
    // A public thread of a channel the client never got: as private as that channel, which it cannot see.
    const hidden = threadChannel(fake.guildId, snowflake(), fake.alice.id, "hidden plans");
    let before = r.memory!.stats().processed;
    r.ep.script(
      { label: "ask in hidden", match: isTurn, reply: { text: "Noted." } },
      {
        label: "ask in hidden: write-back",
        match: isWriteback,
        reply: { text: userFacts(`Alice's badge is ${BADGE}.`) },
      },
    );
    await fake.slash({
      user: fake.alice,
      channel: hidden,
      sub: "ask",
      options: [{ name: "text", type: 3, value: `my badge is ${BADGE}` }],
    });
    await until("write-back", () => r.memory!.stats().processed > before, 30_000);

    before = r.memory!.stats().processed;
    let system = "";
    r.ep.script(
      {
        label: "general",
        match: isTurn,
        expect: (q) => {
          system = q.system;
        },
        reply: { text: "I don't know." },
      },
      { label: "general: write-back", match: isWriteback, reply: { text: "{}" } },
    );
    await fake.say(fake.alice, fake.channel, "what is my badge?", { mentionBot: true });
    await until("write-back", () => r.memory!.stats().processed > before, 30_000);
    expect(system).not.toBe("");
    expect(system).not.toContain(BADGE);
  }, 60_000);
});
