/**
 * `/neo reset` reaching the instance that does not hold the conversation: it waits for the
 * holder's turn to end, then starts the thread over for everyone.
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createConversations } from "../../src/core/conversations/create-conversations.js";
import type { ConversationIO, ConversationsService } from "../../src/core/conversations/types.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type ConversationDeps, createConversationDeps } from "../fixtures/conversation-deps.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { inbound, LIMITS, requestsOf } from "./harness.js";
import { until } from "./worker-process.js";

const redis = await probeRedis();
const CONV = "slack:T1:C1:reset";

describe.skipIf(!redis.ok)("controls across instances", () => {
  let ep: ScriptedOpenAI;
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
    await ep.close();
  });

  it("a reset sent to the other instance applies once the holder's turn ends", {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "neo-controls-"));
    ep = await startScriptedOpenAI([
      { label: "hold", reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "r" } }] } },
    ]);
    ep.fallback(() => ({ text: "done" }));
    const prefix = uniquePrefix("conv-controls");
    const said: string[] = [];
    const io = (): ConversationIO => ({
      reporter: {
        say: async (t) => {
          said.push(t);
        },
        status: async () => {},
        notice: async () => {},
      },
      approvals: { present: async () => undefined, update: async () => {} },
    });
    const open = async (id: string): Promise<ConversationsService> => {
      const store: Store = await createStore({ redisUrl: redis.url, dataDir: dir, prefix });
      const deps: ConversationDeps = await createConversationDeps({ endpointUrl: ep.url, gateDir: dir });
      const c = createConversations({ store, newAgent: deps.newAgent, io, instanceId: id, limits: LIMITS });
      await c.start();
      closers.push(async () => {
        await c.shutdown(1000);
        await deps.close();
        await store.close();
      });
      return c;
    };
    const x = await open("x");
    const y = await open("y");

    await x.submit(inbound(CONV, "long job"));
    await until("x is in the tool call", () => existsSync(join(dir, "r.started")));
    expect(await y.cancel(CONV)).toBe(false);
    const reset = y.reset(CONV);
    writeFileSync(join(dir, "r.open"), "");
    await reset;
    expect(said).toEqual(["done"]);
    await y.submit(inbound(CONV, "fresh start"));
    await until("answered after reset", () => said.length === 2);
    const last = requestsOf(ep, CONV).at(-1)!;
    expect(last.messages).toEqual([{ role: "user", content: "fresh start" }]);
  });
});
