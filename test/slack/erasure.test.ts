/**
 * Erasure that erases, end to end on Slack (issue 32, item 2), on the file store and on Redis: Ann
 * and Bob talk in a shared thread, Ann in her DM, and Ann teaches a fact; then Ann's `/neo forget`
 * (the real command, confirmed by her button) or an admin's `/neo forget <@UANN>`. Afterwards no key
 * or value of the store (every key read whole) and no byte under the data dir holds Ann's message
 * texts or her fact; Bob's words stay, and the shared thread answers Bob with a valid request whose
 * transcript holds the removal marker where Ann's message was (the validating endpoint sees no
 * violation).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REMOVED } from "../../src/core/conversations/erase.js";
import { recordingChannel } from "../approvals/support/recording-channel.js";
import type { FakeInstall } from "../fakes/slack/fake-slack.js";
import { foundInRedis, foundInStore, foundOnDisk } from "../support/on-disk.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import {
  envelope,
  ephemeralClick,
  type Harness,
  installWorkspace,
  mention,
  slashCommand,
  startHarness,
  TEAM,
  until,
  userTs,
} from "./support/harness.js";

const redis = await probeRedis();
const ANN_THREAD = "ANN-THREAD-1111";
const ANN_DM = "ANN-DM-4444";
const ANN_FACT = "ANN-FACT-2222";
const BOB_THREAD = "BOB-THREAD-3333";
const ANN_KEY = `slack:${TEAM}:UANN`;
const ERASED = [ANN_THREAD, ANN_DM, ANN_FACT, ANN_KEY];

/** A pending transfer of Ann's: the erasure closes it (the record stays, pseudonymised). */
const annPlan = () => ({
  id: "plan_ann",
  intent: "pay the locker",
  summary: "pay the locker",
  actions: [
    {
      tool: "wallet__transfer",
      arguments: { to: "0xabc", amount: "5" },
      spend: { amount: "5", asset: "USDC", recipient: "0xabc" },
    },
  ],
  requester: ANN_KEY,
  createdAt: Date.now(),
});

const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";

const A: FakeInstall = {
  code: "code-a",
  teamId: "TAAA",
  botUserId: "UBOTA",
  botId: "BA",
  token: "xoxb-aaa-111",
};
const B: FakeInstall = {
  code: "code-b",
  teamId: "TBBB",
  botUserId: "UBOTB",
  botId: "BB",
  token: "xoxb-bbb-222",
};
const B_ERASED = [B.token, "B-MSG-6666", "B-FACT-7777", `slack:${B.teamId}:`];

const STORES = [
  { name: "file", skip: false },
  { name: "redis", skip: !redis.ok },
] as const;

for (const { name, skip } of STORES) {
  describe.skipIf(skip)(`Slack erasure: ${name} store`, () => {
    let h: Harness | null = null;
    let dataDir = "";
    let prefix = "";
    let approval: { id: string } = { id: "" };
    /** Every key and value of the store: read from the Redis server itself, or from the file store. */
    const found = (needles: string[]) =>
      name === "redis" ? foundInRedis(redis.url, prefix, needles) : foundInStore(h!.store, needles);
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    async function start(oauth = false) {
      dataDir = mkdtempSync(join(tmpdir(), "neo-erasure-"));
      prefix = uniquePrefix("erasure");
      h = await startHarness({
        memory: true,
        tools: { lookup: () => ({ content: "the locker list", isError: false }) },
        ...(oauth ? { oauthInstalls: [A, B] } : {}),
        adminIds: ["UADMIN"],
        ...(name === "redis" ? { redis: { url: redis.url, prefix } } : { dataDir }),
      });
      return h;
    }

    /** One message and its answer, with its write-back (`facts` taught). */
    async function say(event: Record<string, unknown>, answer: string, facts: string[] = [], team?: string) {
      const hh = h!;
      const before = hh.memory!.stats().processed;
      const writeback = JSON.stringify({ conversations: [{ conversation: 1, user_facts: facts }] });
      hh.ep.script(
        { label: answer, match: isTurn, reply: { text: answer } },
        { label: "write-back", match: isWriteback, reply: { text: writeback } },
      );
      expect((await hh.slack.event(envelope(event, undefined, team))).status).toBe(200);
      await until("write-back", () => hh.memory!.stats().processed > before);
    }

    const neo = (user: string, text: string) => h!.slack.command(slashCommand(h!.fake.baseUrl, user, text));

    /** Ann and Bob in a thread of #general, Ann in her DM; returns the thread's ts. */
    async function converse(): Promise<string> {
      const root = mention("C1", "UANN", `please note ${ANN_THREAD}`);
      // Her turn calls a tool: after the erasure its call and result must still pair.
      h!.ep.script({
        label: "Ann's lookup",
        match: isTurn,
        reply: { toolCalls: [{ name: "lookup", arguments: {} }] },
      });
      await say(root, "Noted for the thread.", [`Ann's locker is ${ANN_FACT}`]);
      await say(mention("C1", "UBOB", `and ${BOB_THREAD}`, { thread_ts: root.ts }), "Noted, Bob.");
      const ts = userTs();
      const dm = { type: "message", channel_type: "im", channel: "DUANN", user: "UANN", text: ANN_DM, ts };
      await say({ ...dm, event_ts: ts }, "Noted in your DM.");
      approval = await h!.broker.request(
        annPlan(),
        { userKey: ANN_KEY, displayName: "Ann" },
        `slack:${TEAM}:C1:${root.ts}`,
        recordingChannel(),
      );
      // Before the erasure, her words are in the store (and on disk): the search finds them.
      expect((await found(ERASED)).length).toBeGreaterThan(0);
      return root.ts;
    }

    async function confirm(user: string, value: string) {
      await ephemeralClick(h!, {
        user,
        channel: "C1",
        actionId: "neo_confirm",
        value,
        responseId: "confirmed",
      });
      await h!.fake.waitFor(() => h!.fake.responses.some((r) => r.id === "confirmed"), "forget answered");
    }

    async function expectErasedAndThreadAnswers(threadTs: string) {
      const hh = h!;
      expect(await found(ERASED)).toEqual([]);
      expect((await hh.broker.get(approval.id))?.status).toBe("cancelled");
      expect((await found([BOB_THREAD])).length).toBeGreaterThan(0);
      if (name === "file") expect(foundOnDisk(dataDir, ERASED)).toEqual([]);
      let seen = "";
      hh.ep.script(
        {
          label: "Bob after the erasure",
          match: isTurn,
          expect: (r) => {
            seen = JSON.stringify(r.messages);
          },
          reply: { text: "Still here, Bob." },
        },
        { label: "write-back", match: isWriteback, reply: { text: "{}" } },
      );
      const before = hh.memory!.stats().processed;
      await hh.slack.event(envelope(mention("C1", "UBOB", "anything else?", { thread_ts: threadTs })));
      await until("write-back", () => hh.memory!.stats().processed > before);
      expect(seen).toContain(REMOVED);
      expect(seen).toContain("the locker list");
      expect(seen).toContain(BOB_THREAD);
      for (const s of ERASED) expect(seen).not.toContain(s);
      expect(hh.ep.violations).toEqual([]);
    }

    it("Ann's /neo forget erases her DM, her thread messages and her fact; Bob's thread answers", async () => {
      await start();
      const threadTs = await converse();
      await neo("UANN", "forget");
      await confirm("UANN", "forget");
      await expectErasedAndThreadAnswers(threadTs);
    });

    it("an admin's /neo forget <@UANN> erases the same", async () => {
      await start();
      const threadTs = await converse();
      await neo("UADMIN", "forget <@UANN>");
      await confirm("UADMIN", "forget:slack:T0001:UANN");
      await expectErasedAndThreadAnswers(threadTs);
    });

    it("a workspace's uninstall leaves none of its token, messages or facts; the other workspace answers", async () => {
      const hh = await start(true);
      expect((await installWorkspace(hh, A.code)).status).toBe(200);
      expect((await installWorkspace(hh, B.code)).status).toBe(200);
      const at = (team: FakeInstall, user: string, text: string, extra: Record<string, unknown> = {}) => {
        const ts = userTs();
        return {
          type: "app_mention",
          channel: `C${team.teamId}`,
          user,
          text: `<@${team.botUserId}> ${text}`,
          ts,
          event_ts: ts,
          ...extra,
        };
      };
      await say(at(B, "UANN", "remember B-MSG-6666"), "Noted in B.", ["B's code is B-FACT-7777"], B.teamId);
      const rootA = at(A, "UANN", "remember A-MSG-8888");
      await say(rootA, "Noted in A.", ["A's code is A-FACT-9999"], A.teamId);
      expect((await found(B_ERASED)).length).toBeGreaterThan(0);

      hh.fake.revoke(B.teamId);
      const gone = await hh.slack.event(
        envelope({ type: "app_uninstalled", event_ts: String(Date.now() / 1000) }, undefined, B.teamId),
      );
      expect(gone.status).toBe(200);
      expect(await found(B_ERASED)).toEqual([]);
      if (name === "file") expect(foundOnDisk(dataDir, B_ERASED)).toEqual([]);
      const kept = [A.token, "A-MSG-8888", "A-FACT-9999"];
      expect(new Set((await found(kept)).map((f) => f.split(" in ")[0]))).toEqual(new Set(kept));

      let seen = "";
      hh.ep.script(
        {
          label: "A after B left",
          match: isTurn,
          expect: (r) => {
            seen = JSON.stringify(r.messages);
          },
          reply: { text: "Still here, A." },
        },
        { label: "write-back", match: isWriteback, reply: { text: "{}" } },
      );
      const before = hh.memory!.stats().processed;
      await hh.slack.event(envelope(at(A, "UBOB", "more?", { thread_ts: rootA.ts }), undefined, A.teamId));
      await until("write-back", () => hh.memory!.stats().processed > before);
      expect(seen).toContain("A-MSG-8888");
      expect(hh.ep.violations).toEqual([]);
    });
  });
}
