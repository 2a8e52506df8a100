import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CONVERSATION_HEADER, PURPOSE_HEADER, requestHeaders } from "../../src/core/llm/request-headers.js";

const idOf = (conversation: string) => createHash("sha256").update(conversation).digest("hex").slice(0, 16);

describe("request headers", () => {
  it("name the purpose and the conversation by the first 16 hex digits of its key's sha256, call after call", () => {
    const keys = Array.from({ length: 3 }, (_, i) => `slack:T1:C${i}:${i}.000`);
    for (const key of [...keys, ...keys]) {
      expect(requestHeaders({ purpose: "turn", conversation: key })).toEqual({
        [PURPOSE_HEADER]: "turn",
        [CONVERSATION_HEADER]: idOf(key),
      });
    }
    expect(requestHeaders({ purpose: "writeback" })).toEqual({ [PURPOSE_HEADER]: "writeback" });
  });
});
