/**
 * Memory while Redis is down: fault answers an empty page marked unavailable (the loop tells the
 * user), memory_recall says so in-band, write-back never throws, the outage is logged once, and
 * everything works again when Redis returns. Uses a test-owned redis-server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { setLogLevel, setLogSink } from "../../src/core/log.js";
import { EMPTY_PAGE } from "../../src/core/memory-port.js";
import { createMemory } from "../../src/memory/memory.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { type OwnedRedis, ownedRedis, until } from "./support/redis-server.js";

const ANA = "slack:T1:U_ANA";
const req = {
  user: ANA,
  conversation: "slack:T1:D1:D1",
  place: { kind: "dm", workspace: "T1" } as const,
  query: "what is my cat called",
  activeGoal: "",
  live: [],
};

let server: OwnedRedis;
let store: Store;
let ep: ScriptedOpenAI;
afterEach(async () => {
  setLogSink((line) => process.stdout.write(line));
  setLogLevel("silent");
  await store.close();
  await server.kill();
  await ep.close();
});

describe("memory when the store goes away", () => {
  it("answers unavailable, logs the outage once, and recovers", async () => {
    server = await ownedRedis();
    await server.start();
    store = await createStore({ redisUrl: server.url, dataDir: "unused", prefix: "neo:" });
    ep = await startScriptedOpenAI();
    const memory = createMemory({ store, llm: createLlmForTest(ep).llm });
    await memory.pager.rememberUserFact(ANA, "Ana's cat is called Miso");
    expect((await memory.port.fault(req)).pinned).toContain("Miso");

    const lines: string[] = [];
    setLogLevel("info");
    setLogSink((line) => lines.push(line));
    await server.kill();
    await until(() => !store.healthy());

    for (let i = 0; i < 3; i++)
      expect(await memory.port.fault(req)).toEqual({ ...EMPTY_PAGE, unavailable: true });
    const recall = await memory.memoryRecall("cat", {
      speaker: { userKey: ANA, displayName: "Ana" },
      place: req.place,
    });
    expect(recall).toMatchObject({ isError: true, content: expect.stringContaining("unavailable") });
    expect(() =>
      memory.port.writeBack({
        user: ANA,
        conversation: req.conversation,
        place: req.place,
        transcript: [
          { role: "user", content: "my dog is Rex", speaker: { userKey: ANA, displayName: "Ana" } },
          { role: "assistant", content: "noted" },
        ],
      }),
    ).not.toThrow();
    await memory.drained();
    expect(memory.stats()).toMatchObject({ failed: 1, unavailable: true });
    expect(lines.filter((l) => l.includes("memory unavailable"))).toHaveLength(1);

    await server.start();
    await until(() => store.healthy());
    // A fresh redis-server (no persistence) is empty: what matters is that memory answers again.
    const page = await memory.port.fault(req);
    expect(page.unavailable).toBeUndefined();
    expect(memory.stats().unavailable).toBe(false);
    await memory.pager.rememberUserFact(ANA, "Ana's cat is called Miso");
    expect((await memory.port.fault(req)).pinned).toContain("Miso");
    expect(lines.filter((l) => l.includes("memory available again"))).toHaveLength(1);
  });
});
