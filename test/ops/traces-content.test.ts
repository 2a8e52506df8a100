/**
 * The traced turn of traces.test.ts with `NEO_TRACE_CONTENT=true`: the model's input and output, the
 * tool's arguments and result are on their spans (GenAI conventions' content attributes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ANSWER,
  QUESTION,
  TOOL_RESULT,
  type TracedMention,
  tracedMention,
} from "./support/traced-mention.js";

let t: TracedMention;
beforeAll(async () => {
  t = await tracedMention(true);
}, 30_000);
afterAll(() => t?.close());

describe("traces with NEO_TRACE_CONTENT=true", () => {
  it("carry the message text, the answer, the tool's arguments and result", () => {
    const chats = t.turn.filter((s) => s.name === "chat main-model");
    expect(String(chats[0]!.attributes["gen_ai.input.messages"])).toContain(QUESTION);
    expect(String(chats[1]!.attributes["gen_ai.output.messages"])).toContain(ANSWER);
    const tool = t.turn.find((s) => s.name === "execute_tool orders__lookup")!;
    expect(JSON.parse(String(tool.attributes["gen_ai.tool.call.arguments"]))).toEqual({ id: "4411" });
    expect(tool.attributes["gen_ai.tool.call.result"]).toBe(TOOL_RESULT);
  });
});
