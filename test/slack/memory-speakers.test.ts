/**
 * Only the requester's words reach their cortex (DESIGN.md, Memory scopes; issue 17 item 2), end to
 * end on Slack: the real Bolt app, the real conversations layer and loop, the real memory over a real
 * Redis store, write-back through the scripted cheap model.
 *
 * Ann and Bob share a thread in #general. Bob tells Neo something distinctive in it; Neo's answer
 * to him repeats it. Ann's next mention in the thread brings Bob's message along as context (Slack's
 * `conversations.replies`, https://api.slack.com/methods/conversations.replies), so her turn's model
 * sees it; but her write-back prompt, the records it writes and the turns kept for her recall hold
 * none of it. The cheap model here is naive on purpose: it promotes every line of the prompt it is
 * shown, so anything of Bob's that reached the prompt would become one of Ann's records.
 *
 * Events are `app_mention` payloads as Slack sends them (https://api.slack.com/events/app_mention),
 * a reply in a thread carrying `thread_ts`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import type { ScriptedRequest, ScriptedTurn } from "../support/scripted-openai.js";
import { envelope, type Harness, mention, startHarness, TEAM, until } from "./support/harness.js";

const redis = await probeRedis();

/** Bob's distinctive words: none may be found in anything kept for Ann. */
const BOB_SECRET = "ZEBRA-CANTALOUPE-91";
/** Said by Bob in the thread without addressing Neo: it reaches Ann's turn as thread context. */
const BOB_ASIDE = "WOMBAT-SKATES-12";
const BOB_WORDS = [BOB_SECRET, "quokka", BOB_ASIDE];
/** Ann's own words: they must be kept for her (the test would pass vacuously otherwise). */
const ANN_WORD = "LAUNCH-PLAN-7";

const ANN = `slack:${TEAM}:UANN`;
const BOB = `slack:${TEAM}:UBOB`;
const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";

/** The naive cheap model: the last lines of the prompt it is shown (the turn's own) become facts. */
function promoteEverything(r: ScriptedRequest): { text: string } {
  const prompt = String(r.messages.at(-1)?.content ?? "");
  const facts = prompt
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("===") && !l.startsWith("###"))
    .map((l) => l.replace(/^(USER|NEO): /, ""))
    .slice(-5);
  return { text: JSON.stringify({ conversations: [{ conversation: 1, facts, user_facts: facts }] }) };
}

describe.skipIf(!redis.ok)("Slack: only the requester's words reach their cortex", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("nothing Bob wrote in a thread shared with Ann reaches Ann's write-back, records or recalled turns", async () => {
    h = await startHarness({
      memory: true,
      redis: { url: redis.url, prefix: uniquePrefix("slack-speakers") },
    });
    const hh = h;
    const writebackPrompts = new Map<string, string>();

    /** Ann or Bob speaks in the thread (seeded in the fake too, as Slack keeps it); waits for the write-back. */
    async function say(user: "UANN" | "UBOB", ts: string, text: string, turn: ScriptedTurn) {
      const before = hh.memory!.stats().processed;
      const who = user === "UANN" ? ANN : BOB;
      hh.ep.script(turn, {
        label: `write-back for ${user}`,
        match: isWriteback,
        reply: (r) => {
          writebackPrompts.set(
            who,
            `${writebackPrompts.get(who) ?? ""}\n${String(r.messages.at(-1)?.content)}`,
          );
          return promoteEverything(r);
        },
      });
      const extra = ts === ROOT ? { ts } : { ts, thread_ts: ROOT };
      hh.fake.seedMessage({ channel: "C1", user, text: `<@UNEO> ${text}`, ...extra });
      expect((await hh.slack.event(envelope(mention("C1", user, text, extra)))).status).toBe(200);
      await until(`write-back after ${user}'s turn`, () => hh.memory!.stats().processed > before);
    }

    const ROOT = "1700000000.000100";
    await say("UANN", ROOT, `let's prepare ${ANN_WORD} for Friday`, {
      label: "ann opens the thread",
      match: isTurn,
      reply: { text: "Happy to help with the plan." },
    });
    await say("UBOB", "1700000000.000300", `my door code is ${BOB_SECRET}, and I keep a quokka`, {
      label: "bob speaks in the thread",
      match: isTurn,
      // Neo's answer to Bob repeats his words: that answer is Bob's exchange, never Ann's.
      reply: { text: `Noted, Bob: ${BOB_SECRET}, and a quokka.` },
    });
    // Bob writes in the thread without addressing Neo (Slack keeps it; no turn of his runs).
    hh.fake.seedMessage({
      channel: "C1",
      user: "UBOB",
      ts: "1700000000.000400",
      thread_ts: ROOT,
      text: `I'll pick up the ${BOB_ASIDE} tomorrow`,
    });
    await say("UANN", "1700000000.000500", `what is left for ${ANN_WORD}?`, {
      label: "ann asks again, Bob's message in the thread",
      match: isTurn,
      // Bob's words (his turn, and his aside as thread context) are context for the model in Ann's turn.
      expect: (r) => {
        expect(JSON.stringify(r.messages)).toContain(BOB_SECRET);
        expect(JSON.stringify(r.messages)).toContain(BOB_ASIDE);
      },
      reply: { text: "The slides and the venue are left." },
    });

    // Ann's write-back prompts held her words and none of Bob's.
    const annPrompt = writebackPrompts.get(ANN) ?? "";
    expect(annPrompt).toContain(ANN_WORD);
    for (const w of BOB_WORDS) expect(annPrompt).not.toContain(w);

    // Ann's cortex, read back from the store: her records and her recalled turns.
    const exported = await hh.memory!.pager.exportUser(ANN);
    const annCortex = JSON.stringify(exported);
    expect(exported.records.length).toBeGreaterThan(0);
    expect(exported.turns.map((t) => t.user).join("\n")).toContain(ANN_WORD);
    for (const w of BOB_WORDS) expect(annCortex).not.toContain(w);

    // Bob's own words are his: kept in his cortex.
    expect(JSON.stringify(await hh.memory!.pager.exportUser(BOB))).toContain(BOB_SECRET);
  });
});
