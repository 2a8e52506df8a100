/**
 * One trace per turn, exported over OTLP/HTTP to a local receiver: a Slack mention whose turn calls
 * a tool gives one trace whose spans nest as the turn ran (invoke_agent → queue wait, chat,
 * execute_tool, chat, post), with the GenAI semantic conventions' attributes, the platform, the
 * hashed conversation and the instance, and no message text, tool arguments or results (the
 * default, `NEO_TRACE_CONTENT` unset). traces-content.test.ts is the same turn with content on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashedConversation } from "../../src/ops/tracing/spans.js";
import {
  ANSWER,
  QUESTION,
  TOOL_RESULT,
  type TracedMention,
  tracedMention,
} from "./support/traced-mention.js";

let t: TracedMention;
beforeAll(async () => {
  t = await tracedMention(false);
}, 30_000);
afterAll(() => t?.close());

describe("traces", () => {
  it("one turn is one trace, its spans nested as the turn ran", () => {
    const spans = t.turn;
    const [root] = spans.filter((s) => s.name === "invoke_agent Neo");
    expect(root).toBeDefined();
    expect(root!.parentSpanId).toBe("");
    const childrenOf = (id: string) => spans.filter((s) => s.parentSpanId === id).map((s) => s.name);
    expect(childrenOf(root!.spanId)).toEqual(
      expect.arrayContaining([
        "neo.queue_wait",
        "chat main-model",
        "execute_tool orders__lookup",
        "neo.post",
      ]),
    );
    expect(spans.filter((s) => s.name === "chat main-model" && s.parentSpanId === root!.spanId)).toHaveLength(
      2,
    );
    // Nothing of the turn is outside its tree.
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) if (s !== root) expect(ids.has(s.parentSpanId), s.name).toBe(true);
    // The turn's span covers the whole way from the message's arrival: the queue wait starts with it.
    const wait = spans.find((s) => s.name === "neo.queue_wait")!;
    expect(root!.startTimeUnixNano).toBe(wait.startTimeUnixNano);
    // Every span carries the service and this instance.
    for (const s of spans)
      expect(s.resource).toMatchObject({ "service.name": "neo-test", "service.instance.id": "instance-a" });
  });

  it("spans carry the GenAI attributes, the platform, the hashed conversation and the instance", () => {
    const root = t.turn.find((s) => s.name === "invoke_agent Neo")!;
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "Neo",
      "neo.platform": "slack",
      "neo.instance": "instance-a",
      "neo.turn.mode": "new",
      "neo.turn.status": "answered",
    });
    const conversation = String(root.attributes["neo.conversation"]);
    expect(conversation).toMatch(/^[0-9a-f]{16}$/);
    expect(conversation).not.toContain("C1");
    const [first, second] = t.turn.filter((s) => s.name === "chat main-model");
    expect(first!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "main-model",
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 12,
      "gen_ai.usage.cache_read.input_tokens": 100,
    });
    expect(second!.attributes).toMatchObject({ "gen_ai.response.finish_reasons": ["stop"] });
    const tool = t.turn.find((s) => s.name === "execute_tool orders__lookup")!;
    expect(tool.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "orders__lookup",
      "neo.tool.outcome": "ok",
    });
    expect(String(tool.attributes["gen_ai.tool.call.id"])).not.toBe("");
    expect(hashedConversation("slack:T0001:C1:x")).toMatch(/^[0-9a-f]{16}$/);
  });

  it("exports no message text, tool arguments or results unless NEO_TRACE_CONTENT=true", () => {
    const everything = t.receiver.raw.join("\n");
    for (const text of [QUESTION, TOOL_RESULT, ANSWER, '"id":"4411"', "4411"])
      expect(everything).not.toContain(text);
    for (const s of t.turn) {
      for (const key of Object.keys(s.attributes)) {
        expect(key).not.toMatch(/messages|arguments|result|system_instructions/);
      }
    }
  });
});
