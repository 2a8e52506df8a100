import { describe, expect, it } from "vitest";
import { DISCORD_MAX_CONTENT, splitMessage } from "../../src/adapters/discord/split.js";

/** Every chunk's fences balance: an even number of fence lines. */
function fencesBalanced(chunk: string): boolean {
  return chunk.split("\n").filter((l) => /^\s*```/.test(l)).length % 2 === 0;
}

describe("splitMessage", () => {
  it("leaves a short message alone", () => {
    expect(splitMessage("hello\n\nworld")).toEqual(["hello\n\nworld"]);
  });

  it("cuts on paragraph boundaries, every chunk within 2,000 characters, nothing lost", () => {
    const paras = Array.from({ length: 12 }, (_, i) => `Paragraph ${i} ${"x".repeat(380)}`);
    const chunks = splitMessage(paras.join("\n\n"));
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(DISCORD_MAX_CONTENT);
    // Every chunk starts at a paragraph start.
    for (const c of chunks) expect(c).toMatch(/^Paragraph \d+ /);
    expect(chunks.join("\n\n")).toBe(paras.join("\n\n"));
  });

  it("closes a code fence cut by a split and reopens it with its language", () => {
    const code = Array.from({ length: 120 }, (_, i) => `const line${i} = ${i}; // ${"c".repeat(20)}`);
    const text = `Intro.\n\n\`\`\`ts\n${code.join("\n")}\n\`\`\`\n\nOutro.`;
    const chunks = splitMessage(text);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(DISCORD_MAX_CONTENT);
      expect(fencesBalanced(c)).toBe(true);
    }
    const withCode = chunks.filter((c) => c.includes("const line"));
    expect(withCode.length).toBeGreaterThan(1);
    for (const c of withCode.slice(1)) expect(c.startsWith("```ts\n")).toBe(true);
    // All code lines survive, in order.
    const seen = chunks
      .join("\n")
      .split("\n")
      .filter((l) => l.startsWith("const line"));
    expect(seen).toEqual(code);
  });

  it("cuts a single over-long line at spaces", () => {
    const words = Array.from({ length: 900 }, (_, i) => `w${i}`).join(" ");
    const chunks = splitMessage(words);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(DISCORD_MAX_CONTENT);
    expect(chunks.join(" ")).toBe(words);
  });
});
