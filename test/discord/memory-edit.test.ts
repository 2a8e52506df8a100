/**
 * `/neo memory` on Discord, end to end (issue 32, items 3-4): a real discord.js Client against the
 * fake Discord, the real conversations layer, loop and memory over the file store, `memory_recall`
 * through the real tool surface. Alice teaches Neo facts in her DM, `#staff` (private) and `#general`
 * (public); Bob one in his DM.
 * - `/neo memory export` answers ephemerally with a JSON attachment: Alice's facts with where each
 *   was learned, nothing of Bob's.
 * - `/neo memory` is an ephemeral message with buttons, four records a page; Bob's click on Alice's
 *   button is refused and changes nothing; Alice's "Forget" edits her page in place, and her next
 *   turn's system block and `memory_recall` lack the fact.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MEMORY_RECALL_TOOL } from "../../src/core/tools/types.js";
import type { RecordedCall } from "../fakes/discord/fake-discord.js";
import type { ChannelPayload, FakeUser } from "../fakes/discord/payloads.js";
import type { ScriptedRequest, ScriptedTurn } from "../support/scripted-openai.js";
import { type Rig, startRig, until } from "./support/harness.js";

const DM_FACT = "LOCKER-5150";
const PRIV_FACT = "PRIV-6262";
const PUB_FACT = "PUB-7373";
const BOB_FACT = "BOB-9090";

const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";
const userFacts = (...facts: string[]) =>
  JSON.stringify({ conversations: [{ conversation: 1, user_facts: facts }] });
const body = (c: RecordedCall) => c.body as Record<string, unknown>;

interface Row {
  components: Array<{ custom_id: string; label: string }>;
}

describe("Discord: /neo memory export and buttons", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  async function step(
    who: FakeUser,
    channel: ChannelPayload,
    text: string,
    turns: ScriptedTurn[],
    wb = "{}",
  ) {
    const r = rig!;
    const before = r.memory!.stats().processed;
    r.ep.script(...turns, { label: "write-back", match: isWriteback, reply: { text: wb } });
    await r.fake.say(who, channel, text, { mentionBot: channel.type !== 1 });
    await until("write-back", () => r.memory!.stats().processed > before, 30_000);
  }
  /** The PATCH of an interaction's @original: the ephemeral reply (or, after a click, the page). */
  const edited = (token: string) =>
    rig!.fake.waitForCall(
      (c) => c.method === "PATCH" && c.path.endsWith(`/${token}/messages/@original`),
      `reply to ${token}`,
    );

  it("exports Alice's facts from every place, and only hers; her button forgets one for her next turn; Bob's click is refused", async () => {
    rig = await startRig({ fake: { privateChannel: true }, memory: true });
    const { fake } = rig;
    const aliceDm = fake.dm(fake.alice);
    const said = (label: string) => [{ label, match: isTurn, reply: { text: "Noted." } }];
    await step(
      fake.alice,
      aliceDm,
      `my locker is ${DM_FACT}`,
      said("alice dm"),
      // Five records: the page holds four, so there is a second page.
      userFacts(`Alice's locker is ${DM_FACT}.`, "Alice likes tea.", "Alice runs.", "Alice reads."),
    );
    await step(
      fake.alice,
      fake.staffChannel!,
      `our codename is ${PRIV_FACT}`,
      said("alice staff"),
      userFacts(`Alice's team codename is ${PRIV_FACT}.`),
    );
    await step(
      fake.alice,
      fake.channel,
      `my desk is ${PUB_FACT}`,
      said("alice general"),
      userFacts(`Alice's desk is ${PUB_FACT}.`),
    );
    await step(
      fake.bob,
      fake.dm(fake.bob),
      `my badge is ${BOB_FACT}`,
      said("bob dm"),
      userFacts(`Bob's badge is ${BOB_FACT}.`),
    );

    // The export: an ephemeral reply in #general, with the file attached.
    const exportToken = await fake.slash({
      user: fake.alice,
      sub: "memory",
      options: [{ name: "action", type: 3, value: "export" }],
    });
    await edited(exportToken);
    const reply = fake.channelMessages(fake.channel.id).find((m) => m.interaction_token === exportToken)!;
    expect(Number(reply.flags) & 64).toBe(64);
    const file = fake.uploads.find((u) => u.filename === "neo-export.json")!;
    const text = file.bytes.toString();
    const facts = (
      JSON.parse(text) as { facts: Array<{ statement: string; place: string; channel?: string }> }
    ).facts;
    const where = Object.fromEntries(facts.map((f) => [f.statement, [f.place, f.channel]]));
    expect(where[`Alice's locker is ${DM_FACT}.`]).toEqual(["dm", aliceDm.id]);
    expect(where[`Alice's team codename is ${PRIV_FACT}.`]).toEqual(["private", fake.staffChannel!.id]);
    expect(where[`Alice's desk is ${PUB_FACT}.`]).toEqual(["public", fake.channel.id]);
    expect(facts).toHaveLength(6);
    expect(text).not.toContain(BOB_FACT);
    expect(text).not.toContain(fake.bob.id);

    // The page: four records with their buttons, and Next.
    const pageToken = await fake.slash({ user: fake.alice, sub: "memory" });
    const page = body(await edited(pageToken));
    expect(String(page.content)).toContain("page 1 of 2");
    const rows = page.components as Row[];
    expect(rows).toHaveLength(5);
    expect(rows.at(-1)!.components.map((b) => b.label)).toEqual(["Next"]);
    const message = fake.channelMessages(fake.channel.id).find((m) => m.interaction_token === pageToken)!;
    const line = String(page.content)
      .split("\n")
      .find((l) => l.includes(PUB_FACT))!;
    const n = line.split(".")[0]!;
    const forget = rows.flatMap((r) => r.components).find((b) => b.label === `Forget ${n}`)!;

    // Bob replays Alice's button: refused, privately, and nothing changes.
    const bobClick = await fake.click({ user: fake.bob, message, customId: forget.custom_id });
    const refusal = await fake.waitForCall((c) => c.path.endsWith(`/${bobClick}/callback`), "refusal");
    expect(body(refusal)).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(String((body(refusal).data as { content: string }).content)).toContain("Only the person");
    expect(JSON.stringify(await rig.memory!.list(`discord:@me:${fake.alice.id}`))).toContain(PUB_FACT);

    // Alice's click: acknowledged as an update of her page, which is edited without the fact.
    const aliceClick = await fake.click({ user: fake.alice, message, customId: forget.custom_id });
    const ack = await fake.waitForCall((c) => c.path.endsWith(`/${aliceClick}/callback`), "ack");
    expect(body(ack)).toMatchObject({ type: 6 });
    const after = body(await edited(aliceClick));
    expect(String(after.content)).toContain("Forgotten for good");
    expect(String(after.content)).not.toContain(PUB_FACT);

    // Next: the second page, the records left after the four above.
    const next = (after.components as Row[]).at(-1)!.components.find((b) => b.label === "Next")!;
    const nextClick = await fake.click({ user: fake.alice, message, customId: next.custom_id });
    const second = body(await edited(nextClick));
    expect(String(second.content)).toContain("page 2 of 2");
    expect((second.components as Row[]).at(-1)!.components.map((b) => b.label)).toEqual(["Previous"]);

    // Her next turn, in #general: the fact is in neither the system block nor memory_recall.
    let system = "";
    await step(fake.alice, fake.channel, "where is my desk?", [
      {
        label: "recalls",
        match: isTurn,
        expect: (r) => {
          system = r.system;
        },
        reply: { toolCalls: [{ name: MEMORY_RECALL_TOOL, arguments: { query: "desk" } }] },
      },
      {
        label: "answers",
        match: isTurn,
        expect: (r) => expect(system + String(r.messages.at(-1)!.content)).not.toContain(PUB_FACT),
        reply: { text: "I don't know." },
      },
    ]);
  });
});
