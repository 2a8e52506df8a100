/**
 * Acceptance: a burst of 10 messages into one busy thread. Each sender is acknowledged, all 10
 * reach the model in order, in at most two turns after the running one, none starts a second
 * concurrent turn, none is dropped.
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

  it("queues all 10, acknowledges each, and feeds them to the model in order within two turns", async () => {
    const dir = mkdtempSync(join(tmpdir(), "neo-burst-"));
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
    const msg = (id: string, text: string, who: string): InboundMessage => ({
      id,
      conversation: CONV,
      speaker: { userKey: `discord:G1:${who}`, displayName: who },
      text,
      shared: true,
      receivedAt: Date.now(),
    });

    await conversations.submit(msg("start", "start the job", "ann"));
    await until("the running turn is inside its tool call", () => existsSync(join(dir, "busy.started")));
    const burst = Array.from({ length: 10 }, (_, i) => `burst ${i + 1}`);
    for (const [i, text] of burst.entries()) {
      expect(await conversations.submit(msg(`b${i + 1}`, text, i % 2 ? "bob" : "cy"))).toEqual({
        accepted: true,
      });
    }
    expect(conversations.stats().running).toBe(1);
    writeFileSync(join(dir, "busy.open"), "");
    await until("every burst message answered", () => burst.every((b) => said.join("\n").includes(b)));
    await until("the thread is idle", () => conversations!.stats().running === 0);

    expect(queued).toEqual(burst.map((_, i) => `b${i + 1}`));
    // The model saw the burst in order, each message once, with its author.
    const finalRequest = ep.requests.at(-1)!;
    // The request builder sends each run of user messages as one, texts separated by a blank line.
    const users = finalRequest.messages
      .filter((m) => m.role === "user")
      .flatMap((m) => String(m.content).split(USER_MESSAGE_JOIN));
    expect(users).toEqual(["ann: start the job", ...burst.map((b, i) => `${i % 2 ? "bob" : "cy"}: ${b}`)]);
    console.log(`burst: ${said.length} answers (turns) in all, ${ep.requests.length} model requests`);
    // One answer for the running turn plus at most two more turns.
    expect(said.length).toBeLessThanOrEqual(3);
    const answered = said.flatMap((s) => s.replace(/^answered: /, "").split(" | "));
    for (const [i, b] of burst.entries()) {
      expect(answered.filter((a) => a === `${i % 2 ? "bob" : "cy"}: ${b}`)).toHaveLength(1);
    }
  });
});
