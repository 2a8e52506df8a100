/**
 * The USD budget through the real loop: the real openai SDK against the validating scripted
 * endpoint, which reports each call's usage; the usage tracker counts it in a real file store.
 * Prices: $1 per million tokens each way (`main-model=1,1`), so 1,000 tokens are $0.001, the budget.
 * At 80 % the user gets one Notice (event `budget_warning`); at 100 % the turn ends with an honest
 * partial saying why (event `budget_exceeded`) and no further request is made.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { ann, input, testContext, testDeps, testTools } from "../support/agent-kit.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI | undefined;
let store: Store | undefined;
afterEach(async () => {
  await ep?.close();
  await store?.close();
  ep = undefined;
  store = undefined;
});

const PRICES = { NEO_MODEL_PRICES: "main-model=1,1" };

describe("USD budget in the loop", () => {
  it("tells the user once at 80 % and stops the turn with an honest partial at 100 %", async () => {
    store = await createStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-budget-")), prefix: "neo:" });
    ep = await startScriptedOpenAI([
      { label: "first turn", reply: { text: "Hello.", usage: { prompt: 800, completion: 50 } } },
      {
        label: "second turn, a tool step",
        reply: {
          toolCalls: [{ name: "lookup", arguments: { q: "order 4411" } }],
          usage: { prompt: 100, completion: 20 },
        },
      },
    ]);
    const tools = testTools({ lookup: () => ({ content: "order 4411: shipped", isError: false }) });
    const deps = testDeps(ep, { tools, env: PRICES, usage: { store, userDailyUsd: 0.001 } });
    const agent = createAgent(deps);

    const first = testContext();
    expect((await agent.chat(input("hi"), first)).status).toBe("answered");
    expect(first.reporter.notices).toEqual([]);

    // 850 of 1,000 tokens spent: 85 %. The second turn is told before its first call; its two tool
    // steps bring the day to 850 + 120 + 40 = 1,010, and the check before the third call stops it.
    ep.script({
      label: "second turn, another tool step",
      reply: {
        toolCalls: [{ name: "lookup", arguments: { q: "order 4412" } }],
        usage: { prompt: 30, completion: 10 },
      },
    });
    const second = testContext();
    const result = await agent.chat(input("where are my orders 4411 and 4412?"), second);

    expect(second.reporter.notices).toEqual([
      "Heads-up: you have used $0.00085 of your daily budget of $0.0010 (85 %). At 100 % I stop and tell you where I got to; it resets at 00:00 UTC " +
        second.reporter.notices[0]!.slice(second.reporter.notices[0]!.indexOf("(in ")),
    ]);
    expect(second.reporter.notices[0]).toMatch(/\(in (\d+ h( \d+ min)?|\d+ min|under a minute)\)\.$/);
    // Two tool steps ran (850 + 120 + 40 = 1,010 tokens = $0.00101); the third call was never made.
    expect(ep.requests).toHaveLength(3);
    expect(tools.calls.map((c) => c.args.q)).toEqual(["order 4411", "order 4412"]);
    expect(result.status).toBe("partial");
    expect(result.text).toMatch(
      /^I stopped because your daily budget of \$0\.0010 is used up \(\$0\.0010 spent today\); it resets at 00:00 UTC \(in [^)]+\)\.\nWhat I did: .*lookup.* \(2 ok\)\.\n/,
    );
    expect(second.reporter.says).toEqual([result.text]);
    const budgetEvents = second.events.filter((e) => e.type.startsWith("budget_"));
    expect(budgetEvents).toMatchObject([
      { type: "budget_warning", scope: "user", user: ann.userKey, limitUsd: 0.001 },
      { type: "budget_exceeded", scope: "user", user: ann.userKey, limitUsd: 0.001 },
    ]);
    // The partial is the transcript's last message: the next turn follows an assistant message.
    expect(agent.state().working.at(-1)).toEqual({ role: "assistant", content: result.text });

    // A third turn the same day: stopped before any request, and the warning is not repeated.
    const third = testContext();
    expect((await agent.chat(input("and now?"), third)).status).toBe("partial");
    expect(third.reporter.says[0]).toMatch(/^I stopped because your daily budget/);
    expect(third.reporter.notices).toEqual([]);
    expect(ep.requests).toHaveLength(3);
    expect(ep.violations).toEqual([]);
  });

  it("another user's budget is their own; without prices there is no budget at all", async () => {
    store = await createStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-budget-")), prefix: "neo:" });
    ep = await startScriptedOpenAI([
      { reply: { text: "Hi Ann.", usage: { prompt: 2000, completion: 0 } } },
      { reply: { text: "Hi Bob.", usage: { prompt: 10, completion: 0 } } },
    ]);
    const deps = testDeps(ep, { env: PRICES, usage: { store, userDailyUsd: 0.001 } });
    await createAgent(deps).chat(input("hi"), testContext());
    const bob = { userKey: "console:local:bob", displayName: "Bob" };
    const ctx = testContext({ conversation: "console:local:tty:bob" });
    expect((await createAgent(deps).chat(input("hi", bob), ctx)).text).toBe("Hi Bob.");
    expect(ctx.reporter.notices).toEqual([]);

    const unpriced = testDeps(ep, { usage: { store, userDailyUsd: 0.001 } });
    expect(unpriced.budget).toBeUndefined();
  });
});
