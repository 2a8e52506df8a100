import { describe, expect, it } from "vitest";
import { escapeMrkdwn, markdownToMrkdwn } from "../../src/adapters/slack/mrkdwn.js";
import { splitMrkdwn } from "../../src/adapters/slack/split.js";

describe("Markdown → mrkdwn", () => {
  it("converts bold, italics, strike, inline code, headings, lists and links", () => {
    const md = [
      "# Title",
      "Some **bold**, *italic*, ~~gone~~ and `a < b`.",
      "- one",
      "  - nested [docs](https://example.com/a?b=1&c=2)",
      "1. first",
    ].join("\n");
    expect(markdownToMrkdwn(md)).toBe(
      [
        "*Title*",
        "Some *bold*, _italic_, ~gone~ and `a &lt; b`.",
        "• one",
        "    • nested <https://example.com/a?b=1&amp;c=2|docs>",
        "1. first",
      ].join("\n"),
    );
  });

  it("keeps code blocks verbatim (escaped), drops the language hint, closes an unclosed fence", () => {
    expect(markdownToMrkdwn("```ts\nconst a = **b** && <c>;\n```")).toBe(
      "```\nconst a = **b** &amp;&amp; &lt;c&gt;;\n```",
    );
    expect(markdownToMrkdwn("```\nopen")).toBe("```\nopen\n```");
  });

  it("cannot produce a broadcast, user-group or user mention", () => {
    const out = markdownToMrkdwn("<!channel> <!here> <!everyone> <!subteam^S1|team> <@U1> @here @channel");
    expect(out).not.toMatch(/<[!@]/);
    expect(out).not.toMatch(/@(here|channel|everyone)\b/);
    expect(escapeMrkdwn("a & <b>")).toBe("a &amp; &lt;b&gt;");
  });

  it("refuses link targets that are not web or mail links", () => {
    expect(markdownToMrkdwn("[x](javascript:alert(1))")).not.toContain("<javascript");
    expect(markdownToMrkdwn("[all](!channel)")).not.toContain("<!channel");
  });
});

describe("splitting", () => {
  it("keeps short text whole", () => {
    expect(splitMrkdwn("hello")).toEqual(["hello"]);
  });

  it("splits on paragraph boundaries under the limit", () => {
    const para = "word ".repeat(150).trim();
    const parts = splitMrkdwn([para, para, para].join("\n\n"), 1000);
    expect(parts.length).toBe(3);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(1000);
  });

  it("closes and reopens a code block cut in the middle, losing no line", () => {
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i}`);
    const text = `intro\n\`\`\`\n${lines.join("\n")}\n\`\`\`\noutro`;
    const parts = splitMrkdwn(text, 500);
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(500);
      expect((p.match(/```/g) ?? []).length % 2).toBe(0);
    }
    const body = parts.join("\n").replace(/```/g, "");
    for (const l of lines) expect(body.split("\n").filter((x) => x === l)).toHaveLength(1);
  });

  it("never cuts inside an escape entity", () => {
    const text = "&amp;".repeat(400);
    for (const p of splitMrkdwn(text, 103)) expect(p).toMatch(/^(&amp;)+$/);
  });
});
