/**
 * Write-back is background work: while turns run, a finished turn's consolidation waits (a burst's
 * answers come first, and its jobs coalesce), and it starts as soon as no turn runs. The real
 * conversation layer counts its passes on the gauge the real memory reads; the real agent loop, the
 * real openai SDK against the scripted endpoint, the gate MCP server holding one turn open.
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
import { createTurnGauge } from "../../src/core/foreground.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type ConversationDeps, createConversationDeps } from "../fixtures/conversation-deps.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { LIMITS } from "./harness.js";
import { until } from "./worker-process.js";

const ANN_CONV = "discord:G1:C1:T1";
const BOB_CONV = "discord:G1:C2:T2";

const msg = (id: string, conversation: string, text: string, who: string): InboundMessage => ({
  id,
  conversation,
  speaker: { userKey: `discord:G1:${who}`, displayName: who },
  text,
  shared: true,
  place: { kind: "public", workspace: "G1" },
  receivedAt: Date.now(),
});

describe("write-back gives way to running turns", () => {
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

  it("holds a finished turn's consolidation while another turn runs, and starts it when none does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "neo-wb-way-"));
    /** What happened, in order: answers said and consolidations asked of the cheap model. */
    const events: string[] = [];
    ep = await startScriptedOpenAI([
      {
        label: "Ann's turn calls the gate",
        reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "busy" } }] },
      },
    ]);
    ep.fallback((req) => {
      if (req.purpose === "writeback") {
        events.push("consolidation");
        return { text: JSON.stringify({ conversations: [] }) };
      }
      const asked = req.messages.filter((m) => m.role === "user").at(-1);
      return { text: `answered ${String(asked?.content)}` };
    });
    store = await createStore({ dataDir: join(dir, "data"), prefix: "neo:" });
    const turns = createTurnGauge();
    // The wait is bounded; here by far more than the test takes, so only the turns' end starts it.
    deps = await createConversationDeps({
      endpointUrl: ep.url,
      gateDir: dir,
      memoryStore: store,
      foreground: turns,
      writebackMaxDeferMs: 600_000,
    });
    const io = (): ConversationIO => ({
      reporter: {
        say: async (t) => {
          events.push(t);
        },
        status: async () => {},
        notice: async () => {},
      },
      approvals: { present: async () => undefined, update: async () => {} },
      acknowledgeQueued: async () => {},
    });
    conversations = createConversations({
      store,
      newAgent: deps.newAgent,
      io,
      instanceId: "wb-way",
      limits: LIMITS,
      turns,
    });
    await conversations.start();
    const memory = deps.memory!;

    await conversations.submit(msg("a1", ANN_CONV, "start the job", "ann"));
    await until("Ann's turn is inside its tool call", () => existsSync(join(dir, "busy.started")));
    expect(turns.running).toBe(1);

    // Bob's turn runs and ends while Ann's still runs: his consolidation waits, queued.
    await conversations.submit(msg("b1", BOB_CONV, "what's up", "bob"));
    await until("Bob is answered and his pass has ended", () => events.length === 1 && turns.running === 1);
    expect(events).toEqual(["answered bob: what's up"]);
    expect(memory.stats()).toMatchObject({ depth: 1, running: 0, calls: 0 });

    // Ann's turn ends: no turn runs, and both consolidations start (one call per user).
    writeFileSync(join(dir, "busy.open"), "");
    await until("Ann is answered", () => events.includes("answered ann: start the job"));
    await until("no turn runs", () => turns.running === 0);
    await memory.drained();
    expect(memory.stats()).toMatchObject({ depth: 0, processed: 2, calls: 2, drops: 0 });
    expect(events).toEqual([
      "answered bob: what's up",
      "answered ann: start the job",
      "consolidation",
      "consolidation",
    ]);
  });
});
