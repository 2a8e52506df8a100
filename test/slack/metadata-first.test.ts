/**
 * No answer waits for metadata (issue 30, item 3). What kind of place a channel is (memory scopes)
 * and who people are come from the event when it says so, else from what the store keeps (shared by
 * every instance, kept across restarts), never from a lookup the answer waits for: a channel whose
 * kind is not known yet is read as `public` (the place shown the least memory) and looked up in the
 * background for the next turn; what such a turn teaches is kept as learned in a private place.
 *
 * The real Bolt app, conversations layer, loop, memory over a real Redis, and the fake Slack, which
 * enforces `conversations.info`'s tier (429 beyond it). Ann keeps a private-channel fact (her team
 * codename): a turn sees it only where Neo reads the place as private, so the system block says
 * which reading a turn got.
 */
import { afterEach, describe, expect, it } from "vitest";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { envelope, type Harness, mention, startHarness, until } from "./support/harness.js";

const redis = await probeRedis();

const CODENAME = "PRIV-4242";
const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";
const NOTHING_LEARNED = JSON.stringify({ conversations: [] });
const userFacts = (...facts: string[]) =>
  JSON.stringify({ conversations: [{ conversation: 1, user_facts: facts }] });

/** The channel a turn request is for: `mentionAll` ends each question with it, "(C…)". */
const channelOf = (r: ScriptedRequest) =>
  /\((C[A-Z0-9]+)\)\s*$/.exec(String(r.messages.filter((m) => m.role === "user").at(-1)?.content ?? ""))?.[1];

/** Every request answered: turns say which channel they are in, write-backs learn nothing. */
function answerEverything(h: Harness): void {
  h.ep.fallback((r) => ({ text: isTurn(r) ? `answer in ${channelOf(r)}` : NOTHING_LEARNED }));
}

/** Answers posted in `channel` so far. */
const answers = (h: Harness, channel: string) =>
  h.fake
    .callsTo("chat.postMessage")
    .filter((c) => c.args.channel === channel && c.args.text === `answer in ${channel}`).length;

/** The system blocks of the turns run in `channel`, in order. */
const systemsIn = (h: Harness, channel: string) =>
  h.ep.requests.filter((r) => isTurn(r) && channelOf(r) === channel).map((r) => r.system);

const lookedUp = (h: Harness, channel: string) =>
  h.fake.callsTo("conversations.info").filter((c) => c.args.channel === channel && c.status === 200).length;

/** Ann tells Neo her team codename in private channel `channel`; resolves once it is remembered. */
async function annTellsCodename(h: Harness, channel: string): Promise<void> {
  const before = h.memory!.stats().processed;
  h.ep.script(
    { label: "ann tells", match: isTurn, reply: { text: "Got it." } },
    {
      label: "ann tells: write-back",
      match: isWriteback,
      reply: { text: userFacts(`Ann's team codename is ${CODENAME}.`) },
    },
  );
  expect(
    (await h.slack.event(envelope(mention(channel, "UANN", `our team codename is ${CODENAME}`)))).status,
  ).toBe(200);
  await until("codename remembered", () => h.memory!.stats().processed > before);
}

/** Mention Neo as Ann in each channel at once; resolves when every one is answered. */
async function mentionAll(h: Harness, channels: string[], text: string): Promise<void> {
  const before = new Map(channels.map((c) => [c, answers(h, c)]));
  const res = await Promise.all(
    channels.map((c) => h.slack.event(envelope(mention(c, "UANN", `${text} (${c})`)))),
  );
  expect(res.every((r) => r.status === 200)).toBe(true);
  await until(
    `answers in ${channels.length} channels`,
    () => channels.every((c) => answers(h, c) > before.get(c)!),
    30_000,
  );
}

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe.skipIf(!redis.ok)("Slack: no answer waits for what a channel is or who someone is", () => {
  const open: Harness[] = [];
  afterEach(async () => {
    // Later instances first: the first one owns the fake Slack the others reuse.
    for (const h of open.splice(0).reverse()) await h.close();
  });
  const start = async (...args: Parameters<typeof startHarness>) => {
    const h = await startHarness(...args);
    open.push(h);
    return h;
  };

  it("after 50 channels' lookups used conversations.info's budget, mentions in 100 never-seen channels are all answered at once, read as public", async () => {
    const seen = range("CSEEN", 50);
    const fresh = range("CNEW", 100);
    const h = await start({
      memory: true,
      redis: { url: redis.url, prefix: uniquePrefix("metadata-first") },
      // Slack's Tier 3, as published: 50 a minute (the fake refuses the 51st with a 429).
      rates: { conversationsInfo: { limit: 50, windowMs: 60_000 } },
      channels: [
        { id: "CSEEN0", name: "staff", is_private: true },
        ...seen.slice(1).map((id) => ({ id, name: id.toLowerCase() })),
        // Every other new channel is private: read as public all the same until it is looked up.
        ...fresh.map((id, i) => ({ id, name: id.toLowerCase(), is_private: i % 2 === 0 })),
      ],
    });
    await annTellsCodename(h, "CSEEN0");
    answerEverything(h);
    await mentionAll(h, seen.slice(1), "hello");
    await h.fake.waitFor(
      () => seen.every((c) => lookedUp(h, c) === 1),
      "the first 50 channels looked up",
      15_000,
    );

    await mentionAll(h, fresh, "what is our team codename?");

    // All 100 answered while conversations.info had no room: not one of them was looked up first,
    // and no call waited for room at the gate.
    expect(fresh.filter((c) => lookedUp(h, c) > 0)).toEqual([]);
    expect(Object.keys(h.adapter.rateWaits()).filter((k) => k.includes("conversations.info"))).toEqual([]);
    expect(h.fake.violations()).toEqual([]);
    // Each was read as public, the place shown the least: the private codename was in none of them.
    for (const c of fresh) {
      const systems = systemsIn(h, c);
      expect(systems.length, c).toBe(1);
      expect(systems[0], c).not.toContain(CODENAME);
    }
  }, 60_000);

  it("a never-seen channel's kind is looked up in the background and used by its next turn; what a guessed turn taught stays out of public channels", async () => {
    const h = await start({
      memory: true,
      redis: { url: redis.url, prefix: uniquePrefix("metadata-next") },
      channels: [
        { id: "CSTAFF", name: "staff", is_private: true },
        { id: "CSECRET", name: "secret", is_private: true },
        { id: "CPUBLIC", name: "general" },
      ],
    });
    // Both first turns in private channels are guessed (read as public): what Ann says there is
    // kept as learned in a private place all the same, since the place could have been either.
    await annTellsCodename(h, "CSTAFF");
    const before = h.memory!.stats().processed;
    h.ep.script(
      {
        label: "guessed turn",
        match: isTurn,
        expect: (r) => expect(r.system).not.toContain(CODENAME),
        reply: { text: "Noted." },
      },
      {
        label: "guessed turn: write-back",
        match: isWriteback,
        reply: { text: userFacts("Ann's badge is BADGE-77.") },
      },
    );
    expect((await h.slack.event(envelope(mention("CSECRET", "UANN", "my badge is BADGE-77")))).status).toBe(
      200,
    );
    await until("badge remembered", () => h.memory!.stats().processed > before);
    answerEverything(h);

    // The background lookup says CSECRET is private; its next turn reads it so, with no lookup of its own.
    await h.fake.waitFor(() => lookedUp(h, "CSECRET") === 1, "CSECRET looked up in the background");
    await mentionAll(h, ["CSECRET"], "what is our team codename and my badge?");
    expect(systemsIn(h, "CSECRET").at(-1)).toContain(CODENAME);
    expect(systemsIn(h, "CSECRET").at(-1)).toContain("BADGE-77");
    expect(lookedUp(h, "CSECRET")).toBe(1);

    // In a public channel, first guessed, then looked up as public, neither private fact shows.
    await mentionAll(h, ["CPUBLIC"], "hello");
    await h.fake.waitFor(() => lookedUp(h, "CPUBLIC") === 1, "CPUBLIC looked up");
    await mentionAll(h, ["CPUBLIC"], "what is my badge, and our codename?");
    const publicTurns = systemsIn(h, "CPUBLIC");
    expect(publicTurns.length).toBe(2);
    for (const system of publicTurns) {
      expect(system).not.toContain("BADGE-77");
      expect(system).not.toContain(CODENAME);
    }
  }, 30_000);

  it("what one instance looked up is used by a second one and after a restart, with no second conversations.info", async () => {
    const prefix = uniquePrefix("metadata-shared");
    const channels = [{ id: "CSTAFF", name: "staff", is_private: true }];
    const first = await start({ memory: true, redis: { url: redis.url, prefix, keep: true }, channels });
    await annTellsCodename(first, "CSTAFF");
    await first.fake.waitFor(() => lookedUp(first, "CSTAFF") === 1, "CSTAFF looked up");
    await until("first instance idle", () => first.conversations.stats().running === 0);

    const second = await start({
      memory: true,
      redis: { url: redis.url, prefix, keep: true },
      reuseFake: first.fake,
    });
    answerEverything(second);
    await mentionAll(second, ["CSTAFF"], "what is our team codename?");
    expect(systemsIn(second, "CSTAFF").at(-1)).toContain(CODENAME);
    await until("second instance idle", () => second.conversations.stats().running === 0);
    await second.close();
    open.pop();

    // A restart: a new process on the same store (its own memory empty).
    const third = await start({ memory: true, redis: { url: redis.url, prefix }, reuseFake: first.fake });
    answerEverything(third);
    await mentionAll(third, ["CSTAFF"], "and now?");
    expect(systemsIn(third, "CSTAFF").at(-1)).toContain(CODENAME);
    expect(first.fake.callsTo("conversations.info").length).toBe(1);
  }, 30_000);
});

describe.skipIf(!redis.ok)("Slack: change events keep what Neo knows current", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("a rename, a user's new name and a channel made private are used at once, with no lookup; older news never widens", async () => {
    h = await startHarness({
      memory: true,
      redis: { url: redis.url, prefix: uniquePrefix("metadata-events") },
      channels: [
        { id: "CSTAFF", name: "staff", is_private: true },
        { id: "CGEN", name: "general" },
      ],
    });
    const hh = h;
    await annTellsCodename(hh, "CSTAFF");
    answerEverything(hh);
    await mentionAll(hh, ["CGEN"], "hello <@UBOB>, see <#CGEN>");
    await hh.fake.waitFor(() => lookedUp(hh, "CGEN") === 1, "CGEN looked up");
    const asked = (r: ScriptedRequest) => String(r.messages.filter((m) => m.role === "user").at(-1)?.content);
    const first = hh.ep.requests.filter((r) => isTurn(r) && channelOf(r) === "CGEN").at(-1)!;
    expect(asked(first)).toContain("hello @Bob, see #general");
    expect(first.system).not.toContain(CODENAME);

    // What Slack then says changed (the fake answers the same from now on, but is not asked again).
    hh.fake.setChannel({ id: "CGEN", name: "town-square", is_private: true });
    const at = Date.now() / 1000;
    const ts = (s: number) => s.toFixed(6);
    const send = async (event: Record<string, unknown>) =>
      expect((await hh.slack.event(envelope(event))).status).toBe(200);
    // https://api.slack.com/events/channel_rename (fields as @slack/types ChannelRenameEvent)
    await send({
      type: "channel_rename",
      channel: {
        id: "CGEN",
        name: "town-square",
        name_normalized: "town-square",
        created: 1360782804,
        is_channel: true,
        is_mpim: false,
      },
      event_ts: ts(at),
    });
    // https://api.slack.com/events/user_change (the user object as users.info returns it)
    await send({
      type: "user_change",
      user: {
        id: "UBOB",
        team_id: "T0001",
        name: "bob",
        deleted: false,
        real_name: "Robert Jones",
        profile: { display_name: "Robert", real_name: "Robert Jones", team: "T0001" },
        is_admin: false,
        is_owner: false,
        is_primary_owner: false,
        is_bot: false,
        updated: Math.floor(at),
      },
      cache_ts: Math.floor(at),
      event_ts: ts(at),
    });
    // https://docs.slack.dev/reference/events/message/channel_convert_to_private/
    await send({
      subtype: "channel_convert_to_private",
      user: "UADMIN",
      text: "made this channel *private*. Now, it can only be viewed or joined by invitation.",
      type: "message",
      ts: ts(at + 0.5),
      channel: "CGEN",
      event_ts: ts(at + 0.5),
      channel_type: "group",
    });
    // A message sent before the change, delivered after it (Slack does not promise order): it says
    // the channel is public, which is older news and would widen it, so it is not taken.
    await send({
      type: "message",
      user: "UBOB",
      text: "an older message",
      ts: ts(at - 5),
      channel: "CGEN",
      event_ts: ts(at - 5),
      channel_type: "channel",
    });

    await mentionAll(hh, ["CGEN"], "who is <@UBOB> in <#CGEN>?");
    const next = hh.ep.requests.filter((r) => isTurn(r) && channelOf(r) === "CGEN").at(-1)!;
    expect(asked(next)).toContain("who is @Robert in #town-square?");
    // Now private: the private codename is among what Ann's turn there may see.
    expect(next.system).toContain(CODENAME);
    expect(lookedUp(hh, "CGEN")).toBe(1);
    expect(hh.fake.callsTo("users.info").filter((c) => c.args.user === "UBOB").length).toBe(1);
  }, 30_000);
});
