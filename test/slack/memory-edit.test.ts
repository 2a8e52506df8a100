/**
 * `/neo memory` on Slack, end to end (issue 32, items 3-4): the real Bolt app, conversations layer,
 * loop and memory over the file store, `memory_recall` through the real tool surface. Ann teaches
 * Neo facts in her DM, a private and a public channel; Bob one in his DM.
 * - `/neo memory export` uploads a JSON file into Ann's DM (`conversations.open` + `files.uploadV2`)
 *   listing her three facts with where each was learned, and nothing of Bob's.
 * - `/neo memory` answers with buttons; Bob's forged click on Ann's "Forget this" is refused and
 *   changes nothing; Ann's forgets the fact: her next turn's system block and `memory_recall` lack it.
 *   "Remember everywhere" shows her DM fact in the public channel from her next turn on.
 * - The App Home (`app_home_opened` → `views.publish`) shows her usage and memory; a click there
 *   republishes it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MEMORY_RECALL_TOOL } from "../../src/core/tools/types.js";
import type { ScriptedRequest, ScriptedTurn } from "../support/scripted-openai.js";
import {
  envelope,
  type Harness,
  mention,
  slashCommand,
  startHarness,
  TEAM,
  until,
  userTs,
} from "./support/harness.js";

const DM_FACT = "LOCKER-5150";
const PRIV_FACT = "PRIV-6262";
const PUB_FACT = "PUB-7373";
const BOB_FACT = "BOB-9090";
const PUBLIC = "C0PUBLIC";
const PRIVATE = "C0PRIVATE";

const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";
const userFacts = (...facts: string[]) =>
  JSON.stringify({ conversations: [{ conversation: 1, user_facts: facts }] });

interface Button {
  action_id: string;
  value: string;
  text: { text: string };
}

/** The buttons of a page's blocks, and the record line each sits under. */
function buttons(blocks: unknown[]): Array<Button & { line: string }> {
  const out: Array<Button & { line: string }> = [];
  let line = "";
  for (const b of blocks as Array<{ type: string; text?: { text: string }; elements?: Button[] }>) {
    if (b.type === "section") line = b.text?.text ?? "";
    if (b.type === "actions") for (const e of b.elements ?? []) out.push({ ...e, line });
  }
  return out;
}

describe("Slack: /neo memory export, buttons and the App Home", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  async function step(event: Record<string, unknown>, turns: ScriptedTurn[], writeback = "{}") {
    const hh = h!;
    const before = hh.memory!.stats().processed;
    hh.ep.script(...turns, { label: "write-back", match: isWriteback, reply: { text: writeback } });
    expect((await hh.slack.event(envelope(event))).status).toBe(200);
    await until("write-back", () => hh.memory!.stats().processed > before);
  }
  const dm = (user: string, text: string) => {
    const ts = userTs();
    return { type: "message", channel_type: "im", channel: `D${user}`, user, text, ts, event_ts: ts };
  };
  const neo = (user: string, text: string, channel = PUBLIC) =>
    h!.slack.command(slashCommand(h!.fake.baseUrl, user, text, channel));
  /** A click as Slack sends it, on an ephemeral page (response_url) or on the App Home (view). */
  const press = (user: string, b: Button, where: "message" | "home" = "message") =>
    h!.slack.action({
      type: "block_actions",
      team: { id: TEAM, domain: "fake" },
      user: { id: user, team_id: TEAM },
      api_app_id: "A1",
      token: "legacy",
      trigger_id: "1.2.3",
      ...(where === "home"
        ? { container: { type: "view", view_id: `V${user}` }, view: { id: `V${user}`, type: "home" } }
        : {
            container: { type: "message", message_ts: "1.1", channel_id: PUBLIC, is_ephemeral: true },
            channel: { id: PUBLIC, name: "general" },
            response_url: `${h!.fake.baseUrl}/response/click-${user}-${b.action_id}`,
          }),
      actions: [{ action_id: b.action_id, block_id: "b", value: b.value, type: "button", action_ts: "1.2" }],
    });
  const responseTo = async (id: string) => {
    await h!.fake.waitFor(() => h!.fake.responses.some((r) => r.id === id), `response ${id}`);
    return h!.fake.responses.find((r) => r.id === id)!.body as { text?: string; blocks?: unknown[] };
  };
  /** A turn that calls memory_recall(query); `check` gets the system block and the recall result. */
  const recallTurn = (label: string, query: string, check: (system: string, recalled: string) => void) => {
    let system = "";
    return [
      {
        label: `${label}: recalls`,
        match: isTurn,
        expect: (r) => {
          system = r.system;
        },
        reply: { toolCalls: [{ name: MEMORY_RECALL_TOOL, arguments: { query } }] },
      },
      {
        label: `${label}: answers`,
        match: isTurn,
        expect: (r) => check(system, String(r.messages.at(-1)!.content)),
        reply: { text: "Done." },
      },
    ] satisfies ScriptedTurn[];
  };

  it("exports a person's facts from every place, and only theirs; forgets and widens one by button; Bob's click is refused", async () => {
    h = await startHarness({
      memory: true,
      channels: [
        { id: PRIVATE, name: "staff", is_private: true },
        { id: PUBLIC, name: "general" },
      ],
    });
    const said = (label: string) => [{ label, match: isTurn, reply: { text: "Noted." } }];
    await step(
      dm("UANN", `my locker is ${DM_FACT}`),
      said("ann dm"),
      userFacts(`Ann's locker is ${DM_FACT}.`),
    );
    await step(
      mention(PRIVATE, "UANN", `our codename is ${PRIV_FACT}`),
      said("ann private"),
      userFacts(`Ann's team codename is ${PRIV_FACT}.`),
    );
    // Neo's first message in a channel it never saw reads as a guessed place (kept as private);
    // the kind looked up meanwhile, the next one is known to be public.
    await step(mention(PUBLIC, "UANN", "hello"), said("ann public, first"));
    await h.fake.waitFor(
      () => h!.fake.callsTo("conversations.info").some((c) => c.args.channel === PUBLIC),
      "the public channel looked up",
    );
    await step(
      mention(PUBLIC, "UANN", `my desk is ${PUB_FACT}`),
      said("ann public"),
      userFacts(`Ann's desk is ${PUB_FACT}.`),
    );
    await step(
      dm("UBOB", `my badge is ${BOB_FACT}`),
      said("bob dm"),
      userFacts(`Bob's badge is ${BOB_FACT}.`),
    );

    // Export, run in the public channel: the file goes to Ann's DM, never to the channel.
    const ack = JSON.parse((await neo("UANN", "memory export")).body) as { text: string };
    expect(ack.text).toContain("Working on it");
    expect((await responseTo("cmd-UANN")).text).toContain("in your DM");
    expect(h.fake.uploads.map((u) => [u.channel, u.filename])).toEqual([["DUANN", "neo-export.json"]]);
    const exported = JSON.parse(h.fake.uploads[0]!.bytes.toString()) as {
      facts: Array<{ statement: string; place: string; channel?: string }>;
      usage: Array<{ period: string; modelCalls: number }>;
      recalledExchanges: Array<{ you: string }>;
    };
    // Her usage (today and this month) and the exchanges kept for recall are hers too.
    expect(exported.usage.map((u) => u.period.length).sort((a, b) => a - b)).toEqual([7, 10]);
    for (const u of exported.usage) expect(u.modelCalls).toBeGreaterThan(0);
    expect(exported.recalledExchanges.map((t) => t.you).join(" ")).toContain(PRIV_FACT);
    const where = Object.fromEntries(exported.facts.map((f) => [f.statement, [f.place, f.channel]]));
    expect(where).toEqual({
      [`Ann's locker is ${DM_FACT}.`]: ["dm", "DUANN"],
      [`Ann's team codename is ${PRIV_FACT}.`]: ["private", PRIVATE],
      [`Ann's desk is ${PUB_FACT}.`]: ["public", PUBLIC],
    });
    expect(h.fake.uploads[0]!.bytes.toString()).not.toContain(BOB_FACT);
    expect(h.fake.uploads[0]!.bytes.toString()).not.toContain("UBOB");

    // The page: each fact with where it is shown, and its buttons.
    const page = JSON.parse((await neo("UANN", "memory")).body) as {
      response_type: string;
      blocks: unknown[];
    };
    expect(page.response_type).toBe("ephemeral");
    const all = buttons(page.blocks);
    const forgetPriv = all.find((b) => b.text.text === "Forget this" && b.line.includes(PRIV_FACT))!;
    expect(forgetPriv.line).toContain("private channels");
    const widenDm = all.find((b) => b.text.text === "Remember everywhere" && b.line.includes(DM_FACT))!;

    // Bob replays Ann's button: refused, and the fact stays.
    expect((await press("UBOB", forgetPriv)).status).toBe(200);
    const refused = await responseTo(`click-UBOB-${forgetPriv.action_id}`);
    expect(refused.text).toContain("Only the person this memory belongs to");
    expect(JSON.stringify(await h.memory!.list("slack:T0001:UANN"))).toContain(PRIV_FACT);

    // Ann forgets it: the page is replaced without it.
    await press("UANN", forgetPriv);
    const after = await responseTo(`click-UANN-${forgetPriv.action_id}`);
    expect(JSON.stringify(after.blocks)).toContain("Forgotten for good");
    expect(JSON.stringify(after.blocks)).not.toContain(PRIV_FACT);
    // ...and widens the DM one.
    await press("UANN", widenDm);
    expect(JSON.stringify((await responseTo(`click-UANN-${widenDm.action_id}`)).blocks)).toContain(
      "remembered everywhere",
    );

    // Her next turn, in her DM: the forgotten fact is in neither the system block nor memory_recall.
    await step(
      dm("UANN", "what is my team codename and locker?"),
      recallTurn("ann dm after forget", "team codename locker", (system, recalled) => {
        expect(system + recalled).not.toContain(PRIV_FACT);
        expect(system).toContain(DM_FACT);
      }),
    );
    // In the public channel, the widened DM fact now shows.
    await step(
      mention(PUBLIC, "UANN", "where is my locker?"),
      recallTurn("ann public after widen", "locker", (system, recalled) => {
        expect(system).toContain(DM_FACT);
        expect(recalled).toContain(DM_FACT);
        expect(system + recalled).not.toContain(PRIV_FACT);
      }),
    );
  });

  it("publishes the App Home with usage, approvals and memory; a click there republishes it; Bob's is refused", async () => {
    h = await startHarness({ memory: true });
    await step(
      dm("UANN", `my locker is ${DM_FACT}`),
      [{ label: "t", match: isTurn, reply: { text: "Ok." } }],
      userFacts(`Ann's locker is ${DM_FACT}.`),
    );
    const opened = envelope({ type: "app_home_opened", user: "UANN", channel: "DUANN", tab: "home" });
    expect((await h.slack.event(opened)).status).toBe(200);
    await h.fake.waitFor(() => h!.fake.home("UANN") !== undefined, "home published");
    const home = JSON.stringify(h.fake.home("UANN")!.blocks);
    expect(home).toContain("Your usage");
    expect(home).toContain("Your pending approvals");
    expect(home).toContain(DM_FACT);
    const forget = buttons(h.fake.home("UANN")!.blocks).find((b) => b.text.text === "Forget this")!;
    const published = () => h!.fake.callsTo("views.publish").length;
    expect((await press("UBOB", forget, "home")).status).toBe(200);
    // Bob is told on his own Home; Ann's is not touched.
    await h.fake.waitFor(() => h!.fake.home("UBOB") !== undefined, "bob told");
    expect(JSON.stringify(h.fake.home("UBOB")!.blocks)).toContain("Only the person this memory belongs to");
    expect(JSON.stringify(h.fake.home("UBOB")!.blocks)).not.toContain(DM_FACT);
    expect(published()).toBe(2);
    expect(JSON.stringify(await h.memory!.list("slack:T0001:UANN"))).toContain(DM_FACT);
    await press("UANN", forget, "home");
    await h.fake.waitFor(() => published() === 3, "home republished");
    expect(JSON.stringify(h.fake.home("UANN")!.blocks)).not.toContain(DM_FACT);
    expect(JSON.stringify(h.fake.home("UANN")!.blocks)).toContain("Forgotten for good");
  });
});
