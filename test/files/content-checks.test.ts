/** The validating endpoint's checks of content arrays and of released images (test/support/transcript-checks.ts). */
import { describe, expect, it } from "vitest";
import { contentViolations, prefixViolation } from "../support/transcript-checks.js";
import { PNG } from "./support.js";

const png = `data:image/png;base64,${PNG.toString("base64")}`;
const withImage = {
  role: "user",
  content: [
    { type: "text", text: "see [Image a.png]" },
    { type: "image_url", image_url: { url: png } },
  ],
};

describe("content array checks", () => {
  it("accepts text and image parts in a user message", () => {
    expect(contentViolations([withImage])).toEqual([]);
  });

  it("refuses an image whose bytes are not its type, a non-data/https URL, images outside user messages, empty arrays", () => {
    const fake = {
      role: "user",
      content: [
        { type: "image_url", image_url: { url: `data:image/jpeg;base64,${PNG.toString("base64")}` } },
      ],
    };
    const local = {
      role: "user",
      content: [{ type: "image_url", image_url: { url: "file:///etc/passwd" } }],
    };
    const tool = {
      role: "tool",
      tool_call_id: "c",
      content: [{ type: "image_url", image_url: { url: png } }],
    };
    const empty = { role: "user", content: [] };
    const noText = { role: "user", content: [{ type: "text" }] };
    const out = contentViolations([fake, local, tool, empty, noText]);
    expect(out).toHaveLength(5);
    expect(out[0]).toContain("says image/jpeg but its bytes are not");
    expect(out[1]).toContain("not an https URL or a base64");
    expect(out[2]).toContain("not allowed in a tool message");
    expect(out[3]).toContain("empty content array");
    expect(out[4]).toContain("has no text");
  });

  it("a released image (the same text alone) keeps the prefix; other changes of that message do not", () => {
    const prev = {
      messages: [withImage, { role: "assistant", content: "ok" }],
      system: "s",
      head: "s",
      index: 1,
    };
    const released = { role: "user", content: "see [Image a.png]" };
    const ok = {
      messages: [released, { role: "assistant", content: "ok" }, { role: "user", content: "more" }],
      system: "s",
      head: "s",
      index: 2,
    };
    expect(prefixViolation(prev, ok)).toBeNull();
    const edited = {
      ...ok,
      messages: [{ role: "user", content: "see [Image b.png]" }, ...ok.messages.slice(1)],
    };
    expect(prefixViolation(prev, edited)).toContain("does not extend");
    // An image appearing on an earlier message is a change too.
    expect(
      prefixViolation(
        { ...ok, index: 1 },
        { ...prev, messages: [...prev.messages, { role: "user", content: "more" }], index: 2 },
      ),
    ).toContain("does not extend");
  });

  it("the system text before the transcript must not change between requests without a compaction", () => {
    const prev = {
      messages: [{ role: "user", content: "hi" }],
      system: "head\ntail 1",
      head: "head",
      index: 1,
    };
    const next = {
      messages: [...prev.messages, { role: "assistant", content: "ok" }, { role: "user", content: "more" }],
      system: "head\ntail 2",
      head: "head",
      index: 2,
    };
    // Only the system text after the transcript changed: the prefix holds.
    expect(prefixViolation(prev, next)).toBeNull();
    expect(prefixViolation(prev, { ...next, head: "head, [context: 4% used]" })).toContain(
      "changes the system text before the transcript",
    );
    // A compaction announces a new window: the head may change then.
    expect(
      prefixViolation(prev, {
        ...next,
        head: "[compaction 1: hard]\nsummary",
        system: "[compaction 1: hard]\nsummary",
      }),
    ).toBeNull();
  });
});
