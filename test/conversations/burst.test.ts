/**
 * Acceptance: messages into one busy thread. Each sender is acknowledged, all reach the model in
 * order, each once; one turn, one speaker: another person's backlog waits for the running turn and
 * is then answered in one turn; none starts a second concurrent turn, none is dropped.
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createConversations } from "../../src/core/conversations/create-conversations.js";
import type {
  ConversationIO,
  ConversationsService,
  InboundMessage,
} from "../../src/core/conversations/types.js";
import { USER_MESSAGE_JOIN } from "../../src/core/llm/wire.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type ConversationDeps, createConversationDeps } from "../fixtures/conversation-deps.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { LIMITS } from "./harness.js";
import { until } from "./worker-process.js";

const CONV = "discord:G1:C1:T1";

function newUserTexts(req: ScriptedRequest): string[] {
  const out: string[] = [];
  for (let i = req.messages.length - 1; i >= 0 && req.messages[i]!.role !== "assistant"; i--) {
    const m = req.messages[i]!;
    if (m.role === "user") out.unshift(...String(m.content).split(USER_MESSAGE_JOIN));
  }
  return out;
}

const msg = (id: string, text: string, who: string): InboundMessage => ({
  id,
  conversation: CONV,
  speaker: { userKey: `discord:G1:${who}`, displayName: who },
  text,
  shared: true,
  place: { kind: "public", workspace: "G1" },
  receivedAt: Date.now(),
});

describe("a burst into a busy thread", () => {
  let ep: ScriptedOpenAI | null = null;
  let deps: ConversationDeps | null = null;
  let store: Store | null = null;
  let conversations: ConversationsService | null = null;
  afterEach(async () => {
    await conversations?.shutdown(1000);
    await deps?.close();
    await store?.close();
    await ep?.close();
  });

  const start = async (dir: string): Promise<{ said: string[]; queued: string[] }> => {
    ep = await startScriptedOpenAI([
      {
        label: "running turn calls the gate",
        reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "busy" } }] },
      },
    ]);
    ep.fallback((req) => ({ text: `answered: ${newUserTexts(req).join(" | ")}` }));
    deps = await createConversationDeps({ endpointUrl: ep.url, gateDir: dir });
    store = await createStore({ dataDir: join(dir, "data"), prefix: "neo:" });
    const said: string[] = [];
    const queued: string[] = [];
    const io = (): ConversationIO => ({
      reporter: {
        say: async (t) => {
          said.push(t);
        },
        status: async () => {},
        notice: async () => {},
      },
      approvals: { present: async () => undefined, update: async () => {} },
      acknowledgeQueued: async (m) => {
        queued.push(m.id);
      },
    });
    conversations = createConversations({
      store,
      newAgent: deps.newAgent,
      io,
      instanceId: "burst",
      limits: LIMITS,
    });
    await conversations.start();
    await conversations.submit(msg("start", "start the job", "ann"));
    await until("the running turn is inside its tool call", () => existsSync(join(dir, "busy.started")));
    return { said, queued };
  };

  it("answers 5 messages queued behind another person's running turn in one further turn", async () => {
    const dir = mkdtempSync(join(tmpdir(), "neo-burst-"));
    const { said, queued } = await start(dir);
    const burst = Array.from({ length: 5 }, (_, i) => `bob ${i + 1}`);
    for (const [i, text] of burst.entries()) {
      expect(await conversations!.submit(msg(`b${i + 1}`, text, "bob"))).toEqual({ accepted: true });
    }
    writeFileSync(join(dir, "busy.open"), "");
    await until("the thread is idle", () => said.length === 2 && conversations!.stats().running === 0);

    expect(queued).toEqual(burst.map((_, i) => `b${i + 1}`));
    // Ann's turn: the gate call and its answer (after the tool result); then one request and one
    // answer for all of Bob's.
    expect(ep!.requests).toHaveLength(3);
    expect(said.slice(1)).toEqual([`answered: ${burst.map((b) => `bob: ${b}`).join(" | ")}`]);
    // None of Bob's words reached Ann's turn.
    for (const r of ep!.requests.slice(0, 2)) expect(JSON.stringify(r.messages)).not.toContain("bob");
  });

  it("keeps platform order across speakers: each speaker's run of messages is one turn, each message once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "neo-burst-"));
    const { said } = await start(dir);
    const who = (i: number) => (i < 3 ? "bob" : i < 6 ? "cy" : "bob");
    const burst = Array.from({ length: 10 }, (_, i) => `burst ${i + 1}`);
    for (const [i, text] of burst.entries()) {
      expect(await conversations!.submit(msg(`b${i + 1}`, text, who(i)))).toEqual({ accepted: true });
    }
    expect(conversations!.stats().running).toBe(1);
    writeFileSync(join(dir, "busy.open"), "");
    await until("every burst message answered", () => burst.every((b) => said.join("\n").includes(b)));
    await until("the thread is idle", () => conversations!.stats().running === 0);

    // The model saw the burst in order, each message once, with its author.
    const users = ep!.requests
      .at(-1)!
      .messages.filter((m) => m.role === "user")
      .flatMap((m) => String(m.content).split(USER_MESSAGE_JOIN));
    expect(users).toEqual(["ann: start the job", ...burst.map((b, i) => `${who(i)}: ${b}`)]);
    // Ann's answer, then Bob's three, Cy's three and Bob's four, each run in one turn.
    expect(said.slice(1)).toEqual([
      ...[burst.slice(0, 3), burst.slice(3, 6), burst.slice(6)].map(
        (run, r) => `answered: ${run.map((b) => `${r === 1 ? "cy" : "bob"}: ${b}`).join(" | ")}`,
      ),
    ]);
  });
});
