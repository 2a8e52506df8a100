import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { compactionMarker } from "../../src/core/compaction/marker.js";
import { CONVERSATION_HEADER, PURPOSE_HEADER } from "../../src/core/llm/request-headers.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI | null = null;
afterEach(async () => {
  // Tests that provoke violations on purpose clear them before closing.
  await ep?.close();
  ep = null;
});

function sdk(url: string, conversation?: string) {
  return new OpenAI({
    apiKey: "sk-test",
    baseURL: url,
    maxRetries: 0,
    defaultHeaders: conversation ? { [CONVERSATION_HEADER]: conversation, [PURPOSE_HEADER]: "turn" } : {},
  });
}

type Msgs = OpenAI.Chat.Completions.ChatCompletionMessageParam[];
const call = (id: string, name = "t") => ({
  id,
  type: "function" as const,
  function: { name, arguments: "{}" },
});

describe("scripted OpenAI endpoint", () => {
  it("answers scripted text and tool calls through the real SDK and records the request", async () => {
    ep = await startScriptedOpenAI([
      {
        expect: (r) => expect(r.messages.at(-1)?.content).toBe("hi"),
        reply: {
          toolCalls: [{ id: "c1", name: "lookup", arguments: { q: 1 } }],
          usage: { prompt: 7, completion: 3 },
        },
      },
      { reply: { text: "done", finishReason: "length" } },
    ]);
    const c = sdk(ep.url);
    const a = await c.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(a.choices[0]!.message.tool_calls?.[0]).toMatchObject({
      id: "c1",
      function: { arguments: '{"q":1}' },
    });
    expect(a.choices[0]!.finish_reason).toBe("tool_calls");
    expect(a.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3 });
    const b = await c.chat.completions.create({ model: "m", messages: [{ role: "user", content: "again" }] });
    expect([b.choices[0]!.message.content, b.choices[0]!.finish_reason]).toEqual(["done", "length"]);
    expect(ep.requests.map((r) => r.messages.at(-1)?.content)).toEqual(["hi", "again"]);
  });

  it("the harness rejects a request with an orphaned tool result, naming the message", async () => {
    ep = await startScriptedOpenAI([{ reply: { text: "never sent" }, label: "only" }]);
    const messages: Msgs = [
      { role: "user", content: "hi" },
      { role: "tool", tool_call_id: "ghost", content: "result without a call" },
    ];
    await expect(sdk(ep.url).chat.completions.create({ model: "m", messages })).rejects.toThrow(
      /orphaned tool result messages\[1\] \(tool tool_call_id=ghost/,
    );
    expect(ep.violations).toHaveLength(1);
    expect(() => ep!.verify()).toThrow(/orphaned tool result/);
    expect(ep.pending()).toBe(1); // rejected before any scripted turn was spent
    ep.violations.length = 0;
    await sdk(ep.url).chat.completions.create({ model: "m", messages: [{ role: "user", content: "ok" }] });
  });

  it("rejects a tool call without a result and a duplicated message", async () => {
    ep = await startScriptedOpenAI();
    const c = sdk(ep.url);
    const unanswered: Msgs = [
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [call("a"), call("b")] },
      { role: "tool", tool_call_id: "a", content: "ok" },
    ];
    await expect(c.chat.completions.create({ model: "m", messages: unanswered })).rejects.toThrow(
      /tool call b of messages\[1\] .* has no result/,
    );
    const doubled: Msgs = [
      { role: "user", content: "hi" },
      { role: "user", content: "hi" },
    ];
    await expect(c.chat.completions.create({ model: "m", messages: doubled })).rejects.toThrow(
      /duplicate message: messages\[1\]/,
    );
    expect(ep.violations).toHaveLength(2);
    ep.violations.length = 0;
  });

  it("rejects broken turn alternation: user, user; assistant, assistant; an assistant message first", async () => {
    ep = await startScriptedOpenAI();
    ep.fallback(() => ({ text: "ok" }));
    const c = sdk(ep.url);
    const userUser: Msgs = [
      { role: "user", content: "first" },
      { role: "user", content: "second" },
    ];
    await expect(c.chat.completions.create({ model: "m", messages: userUser })).rejects.toThrow(
      /user, user: messages\[1\] \(user: "second"\) follows messages\[0\] \(user: "first"\)/,
    );
    const assistantTwice: Msgs = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "one" },
      { role: "assistant", content: "two" },
    ];
    await expect(c.chat.completions.create({ model: "m", messages: assistantTwice })).rejects.toThrow(
      /assistant, assistant: messages\[2\]/,
    );
    const assistantFirst: Msgs = [
      { role: "system", content: "charter" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "hi" },
    ];
    await expect(c.chat.completions.create({ model: "m", messages: assistantFirst })).rejects.toThrow(
      /starts with messages\[0\] \(assistant: "hello"\), not a user message/,
    );
    expect(ep.violations).toHaveLength(3);
    ep.violations.length = 0;
    // A user message right after tool results (a message that arrived while the tools ran) is fine.
    const afterTools: Msgs = [
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [call("a")] },
      { role: "tool", tool_call_id: "a", content: "ok" },
      { role: "user", content: "also this" },
    ];
    await c.chat.completions.create({ model: "m", messages: afterTools });
    expect(ep.violations).toEqual([]);
  });

  it("checks prefix consistency per conversation and accepts a break only after a compaction marker", async () => {
    ep = await startScriptedOpenAI();
    ep.fallback(() => ({ text: "ok" }));
    const c = sdk(ep.url, "conv-1");
    const other = sdk(ep.url, "conv-2");
    const first: Msgs = [{ role: "user", content: "one" }];
    await c.chat.completions.create({ model: "m", messages: first });
    // Another conversation interleaving does not disturb conv-1's prefix.
    await other.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
    const second: Msgs = [...first, { role: "assistant", content: "ok" }, { role: "user", content: "two" }];
    await c.chat.completions.create({ model: "m", messages: second });

    const rewritten: Msgs = [
      { role: "user", content: "ONE" },
      ...second.slice(1),
      { role: "user", content: "3" },
    ];
    await expect(c.chat.completions.create({ model: "m", messages: rewritten })).rejects.toThrow(
      /does not extend request #3: messages\[0\] \(user: "ONE"\) replaces messages\[0\] \(user: "one"\)/,
    );
    await expect(c.chat.completions.create({ model: "m", messages: second })).rejects.toThrow(
      /repeats request #3/,
    );
    expect(ep.violations).toHaveLength(2);
    ep.violations.length = 0;

    const compacted: Msgs = [
      { role: "system", content: `charter\n${compactionMarker(1, "hard")}\nGOAL: one` },
      { role: "user", content: "three" },
    ];
    await c.chat.completions.create({ model: "m", messages: compacted });
    expect(ep.violations).toEqual([]);
  });

  it("answers HTTP errors with Retry-After, and a hanging request ends when the client aborts", async () => {
    ep = await startScriptedOpenAI([
      { reply: { kind: "error", status: 503, retryAfterMs: 1 } },
      { reply: { text: "after retry" } },
      { reply: { kind: "hang" } },
    ]);
    const retrying = new OpenAI({ apiKey: "k", baseURL: ep.url, maxRetries: 1 });
    const ok = await retrying.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "a" }],
    });
    expect(ok.choices[0]!.message.content).toBe("after retry");
    expect(ep.requests.map((r) => r.status)).toEqual([503, 200]);

    const ac = new AbortController();
    const pending = retrying.chat.completions.create(
      { model: "m", messages: [{ role: "user", content: "b" }] },
      { signal: ac.signal },
    );
    await ep.waitForRequest(3);
    ac.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    await ep.waitForAbort(3);
    expect(ep.requests[2]!.aborted).toBe(true);
  });

  it("routes concurrent conversations by matcher and serves unmatched requests from a handler", async () => {
    ep = await startScriptedOpenAI([
      { match: (r) => r.messages[0]?.content === "bob", reply: { text: "for bob" } },
      { match: (r) => r.messages[0]?.content === "ann", reply: { text: "for ann" } },
    ]);
    ep.fallback((r) => ({ text: `echo ${String(r.messages[0]?.content)}` }));
    const c = sdk(ep.url);
    const ask = (who: string) =>
      c.chat.completions
        .create({ model: "m", messages: [{ role: "user", content: who }] })
        .then((r) => r.choices[0]!.message.content);
    expect(await Promise.all([ask("ann"), ask("bob"), ask("cy")])).toEqual(["for ann", "for bob", "echo cy"]);
  });
});
