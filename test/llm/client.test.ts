import { getEventListeners } from "node:events";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { LlmError } from "../../src/core/llm/errors.js";
import type { CompletionRequest } from "../../src/core/llm/types.js";
import type { UsageEntry } from "../../src/core/llm/usage-ledger.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI;
afterEach(async () => {
  await ep.close();
});

const req = (over: Partial<CompletionRequest> = {}): CompletionRequest => ({
  role: "main",
  system: "sys",
  messages: [{ role: "user", content: "hi" }],
  tags: { purpose: "turn", conversation: "console:local:tty:1", user: "console:local:me" },
  ...over,
});

describe("two-model client", () => {
  it("maps the answer, tool calls and finish reason, and hands its usage on tagged with the conversation and user", async () => {
    ep = await startScriptedOpenAI([
      {
        expect: (r) => {
          expect(r.model).toBe("main-model");
          expect(r.system).toBe("sys");
          expect(r.purpose).toBe("turn");
          expect(r.conversation).toMatch(/^[0-9a-f]{16}$/); // hashed, never the raw key
        },
        reply: {
          toolCalls: [{ id: "c1", name: "a__b", arguments: "{}" }],
          usage: { prompt: 100, completion: 20 },
        },
      },
    ]);
    const { llm, ledger } = createLlmForTest(ep, { NEO_MODEL_PRICES: "main-model=2,8" });
    const recorded: UsageEntry[] = [];
    ledger.onRecord((e) => recorded.push(e));
    const c = await llm.complete(req());
    expect(c).toMatchObject({ finishReason: "tool_calls", model: "main-model", content: null });
    expect(c.toolCalls[0]!.function.name).toBe("a__b");
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      model: "main-model",
      tags: { conversation: "console:local:tty:1", user: "console:local:me" },
      usage: { promptTokens: 100, completionTokens: 20 },
    });
    expect(recorded[0]!.costUsd).toBeCloseTo((100 * 2 + 20 * 8) / 1_000_000, 12);
    expect(ledger.total().costUsd).toBeCloseTo((100 * 2 + 20 * 8) / 1_000_000, 12);
  });

  it("sends credentials written into OPENAI_BASE_URL as basic auth, never in a URL", async () => {
    ep = await startScriptedOpenAI([{ reply: { text: "ok" } }]);
    const withCredentials = ep.url.replace("http://", "http://proxy-user:pa%40ss-SECRET@");
    const { llm } = createLlmForTest({ url: withCredentials }, { OPENAI_API_KEY: "" });
    expect((await llm.complete(req())).content).toBe("ok");
    const basic = Buffer.from("proxy-user:pa@ss-SECRET").toString("base64");
    expect(ep.requests[0]!.authorization).toBe(`Basic ${basic}`);
    // A connection error names the endpoint without its credentials.
    const dead = createLlmForTest(
      { url: "http://proxy-user:pa%40ss-SECRET@127.0.0.1:1/v1" },
      { OPENAI_API_KEY: "" },
    );
    const err = await dead.llm.complete(req()).then(
      () => undefined,
      (e: unknown) => e as LlmError,
    );
    expect(err).toBeInstanceOf(LlmError);
    expect(`${err?.message} ${String((err?.cause as Error | undefined)?.message)}`).not.toContain("SECRET");
  });

  it("refuses credentials in OPENAI_BASE_URL beside OPENAI_API_KEY (one Authorization header)", async () => {
    ep = await startScriptedOpenAI([]);
    expect(() => createLlmForTest({ url: "http://u:p@127.0.0.1:1/v1" })).toThrow(
      /^OPENAI_BASE_URL: carries a user and password while OPENAI_API_KEY is set/,
    );
  });

  it("falls back to the main model when the cheap model fails, with one cheap attempt only", async () => {
    ep = await startScriptedOpenAI([
      { expect: (r) => expect(r.model).toBe("mini"), reply: { kind: "error", status: 500 } },
      { expect: (r) => expect(r.model).toBe("main-model"), reply: { text: "summary" } },
    ]);
    const { llm, ledger } = createLlmForTest(ep, { NEO_CHEAP_MODEL: "mini", NEO_LLM_MAX_RETRIES: "2" });
    const billed: string[] = [];
    ledger.onRecord((e) => billed.push(e.model));
    const c = await llm.complete(req({ role: "cheap", tags: { purpose: "compaction" } }));
    expect([c.content, c.model]).toEqual(["summary", "main-model"]);
    expect(ep.requests.map((r) => r.model)).toEqual(["mini", "main-model"]);
    expect(billed).toEqual(["main-model"]);
  });

  it("gives a tool call sent with an empty id a unique id, so its result can be paired", async () => {
    ep = await startScriptedOpenAI([{ reply: { toolCalls: [{ id: "", name: "a", arguments: "{}" }] } }]);
    const { llm } = createLlmForTest(ep);
    expect((await llm.complete(req())).toolCalls[0]!.id).toMatch(/^call_[0-9a-f-]{36}$/);
  });

  it("uses the main model for the cheap role when no cheap model is configured", async () => {
    ep = await startScriptedOpenAI([
      { expect: (r) => expect(r.model).toBe("main-model"), reply: { text: "x" } },
    ]);
    const { llm } = createLlmForTest(ep);
    expect((await llm.complete(req({ role: "cheap" }))).model).toBe("main-model");
  });

  it("lets the SDK retry 429 exactly NEO_LLM_MAX_RETRIES times, then throws a coded LlmError", async () => {
    const busy = { kind: "error" as const, status: 429, retryAfterMs: 1 };
    ep = await startScriptedOpenAI([{ reply: busy }, { reply: busy }, { reply: busy }]);
    const { llm, ledger } = createLlmForTest(ep, { NEO_LLM_MAX_RETRIES: "2" });
    const err = await llm.complete(req()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).code).toBe("LLM_RATE_LIMITED");
    expect(ep.requests).toHaveLength(3);
    expect(ledger.total().calls).toBe(0);
  });

  it("tells a request over the model's window (OpenAI's code, or only the message) from other 400s", async () => {
    ep = await startScriptedOpenAI([
      { reply: { kind: "error", status: 400, code: "context_length_exceeded", message: "too long" } },
      {
        reply: {
          kind: "error",
          status: 400,
          message: "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens.",
        },
      },
      { reply: { kind: "error", status: 400, message: "Invalid value for 'temperature'" } },
    ]);
    const { llm } = createLlmForTest(ep);
    const codes: string[] = [];
    for (let i = 0; i < 3; i++)
      codes.push(((await llm.complete(req()).catch((e: unknown) => e)) as LlmError).code);
    expect(codes).toEqual(["LLM_CONTEXT_LENGTH", "LLM_CONTEXT_LENGTH", "LLM_BAD_REQUEST"]);
  });

  it("leaves no abort listener on the caller's signal after a call (a turn reuses it for every step)", async () => {
    ep = await startScriptedOpenAI([{ reply: { text: "a" } }, { reply: { text: "b" } }]);
    const { llm } = createLlmForTest(ep);
    const signal = new AbortController().signal;
    await llm.complete(req({ signal, tags: { purpose: "compaction" } }));
    await llm.complete(req({ signal, tags: { purpose: "compaction" } }));
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });

  it("cancels the in-flight request when the signal aborts", async () => {
    ep = await startScriptedOpenAI([{ reply: { kind: "hang" } }]);
    const { llm } = createLlmForTest(ep);
    const ac = new AbortController();
    const pending = llm.complete(req({ signal: ac.signal })).catch((e: unknown) => e);
    await ep.waitForRequest(1);
    ac.abort();
    expect(((await pending) as LlmError).code).toBe("LLM_ABORTED");
    await ep.waitForAbort(1);
  });
});

describe("streamed answers", () => {
  const sink = () => {
    const seen: string[] = [];
    return { seen, onText: { text: (d: string) => seen.push(d), restart: () => seen.push("<restart>") } };
  };

  it("hands each piece of text to the sink before the next one leaves the endpoint", async () => {
    const s = sink();
    ep = await startScriptedOpenAI([
      {
        reply: {
          text: "one two three four",
          stream: {
            deltas: 4,
            // Piece i+1 is sent only once the client handed piece i on: streaming, not buffering.
            beforeDelta: async (i) => {
              while (s.seen.length < i) await new Promise((r) => setImmediate(r));
            },
          },
        },
      },
    ]);
    const { llm } = createLlmForTest(ep);
    const c = await llm.complete(req({ onText: s.onText }));
    expect(s.seen).toEqual(["one t", "wo th", "ree f", "our"]);
    expect(s.seen.join("")).toBe("one two three four");
    expect(c.content).toBe("one two three four");
    expect(ep.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("assembles text and tool calls exactly as the unstreamed answer, usage included", async () => {
    const reply = {
      text: "Let me look.",
      toolCalls: [
        { id: "c1", name: "fs__read_file", arguments: { path: "/a/b.txt" } },
        { id: "c2", name: "web__get", arguments: '{"url":"https://x.test/?q=1&r=2"}' },
      ],
      usage: { prompt: 321, completion: 45 },
    };
    ep = await startScriptedOpenAI([{ reply }, { reply }]);
    const raw = new OpenAI({ apiKey: "k", baseURL: ep.url, maxRetries: 0 });
    const plain = await raw.chat.completions.create({
      model: "main-model",
      messages: [{ role: "user", content: "hi" }],
    });
    const { llm, ledger } = createLlmForTest(ep);
    const c = await llm.complete(req());
    const m = plain.choices[0]!.message;
    expect(c.content).toBe(m.content);
    expect(c.toolCalls).toEqual(m.tool_calls);
    expect(c.finishReason).toBe(plain.choices[0]!.finish_reason);
    expect(c.usage).toEqual({ promptTokens: 321, completionTokens: 45 });
    expect(ledger.total()).toMatchObject({ calls: 1, promptTokens: 321, completionTokens: 45 });
  });

  it("asks again when the stream breaks mid-answer, telling the sink to start over", async () => {
    const s = sink();
    ep = await startScriptedOpenAI([
      { label: "cut", reply: { text: "The answer is forty", stream: { deltas: 4, cutAfter: 2 } } },
      { label: "retry", reply: { text: "The answer is 42.", stream: { deltas: 2 } } },
    ]);
    const { llm, ledger } = createLlmForTest(ep, { NEO_LLM_MAX_RETRIES: "1" });
    const c = await llm.complete(req({ onText: s.onText }));
    expect(c.content).toBe("The answer is 42.");
    expect(s.seen).toEqual(["The a", "nswer", "<restart>", "The answe", "r is 42."]);
    expect(ep.requests.map((r) => r.cut)).toEqual([true, false]);
    expect(ledger.total().calls).toBe(1);
  });

  it("gives up with LLM_STREAM_BROKEN once the retries are spent", async () => {
    const cut = { text: "never whole", stream: { cutAfter: 1 } };
    ep = await startScriptedOpenAI([{ reply: cut }, { reply: cut }, { reply: cut }]);
    const { llm, ledger } = createLlmForTest(ep, { NEO_LLM_MAX_RETRIES: "2" });
    const err = (await llm.complete(req()).catch((e: unknown) => e)) as LlmError;
    expect(err.code).toBe("LLM_STREAM_BROKEN");
    expect(ep.requests).toHaveLength(3);
    expect(ledger.total().calls).toBe(0);
  });

  it("estimates usage when the endpoint sends none for a streamed answer", async () => {
    ep = await startScriptedOpenAI([{ reply: { text: "a fairly short answer", stream: { noUsage: true } } }]);
    const { llm, ledger } = createLlmForTest(ep);
    const c = await llm.complete(req());
    expect(c.usage.promptTokens).toBeGreaterThan(0);
    expect(c.usage.completionTokens).toBeGreaterThan(0);
    expect(ledger.total().calls).toBe(1);
  });
});
