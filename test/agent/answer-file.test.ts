/** The one decision of whether an answer goes as a file, and what is said beside it. */
import { describe, expect, it } from "vitest";
import { answerFile, DEFAULT_ANSWER_FILE_LIMITS } from "../../src/core/agent/answer-file.js";

const text = (f: { bytes: Uint8Array }) => Buffer.from(f.bytes).toString("utf8");

describe("answerFile", () => {
  it("says a short answer as it is", () => {
    expect(answerFile("Oslo is at 4 °C.", DEFAULT_ANSWER_FILE_LIMITS)).toBeNull();
  });

  it("sends an answer past the length whole as answer.md, its first paragraphs as the message, never into code", () => {
    const long = `Intro line.\n\nSecond paragraph.\n\n\`\`\`ts\nconst a = 1;\n\`\`\`\n\n${"z".repeat(200)}`;
    const plan = answerFile(long, { maxChars: 100, codeLines: 0 })!;
    expect(plan.files.map((f) => [f.name, f.type, text(f)])).toEqual([["answer.md", "text/markdown", long]]);
    expect(plan.message).toBe(
      "Intro line.\n\nSecond paragraph.\n\n*(The full answer is attached as answer.md.)*",
    );
  });

  it("cuts a first paragraph longer than the lead at a word", () => {
    const long = `${"word ".repeat(200)}end`;
    const plan = answerFile(long, { maxChars: 1000, codeLines: 0 })!;
    expect(plan.message).toMatch(/^(word ){79}word…\n\n\*\(The full answer is attached as answer\.md\.\)\*$/);
  });

  it("sends each code block past the line limit as a file with its language's extension", () => {
    const py = Array.from({ length: 5 }, (_, i) => `print(${i})`).join("\n");
    const sh = "echo hi";
    const sql = Array.from({ length: 4 }, () => "select 1;").join("\n");
    const answer = `Run:\n\n\`\`\`python\n${py}\n\`\`\`\n\nThen:\n\n\`\`\`bash\n${sh}\n\`\`\`\n\n\`\`\`SQL\n${sql}\n\`\`\`\n\n\`\`\`\n${py}\n\`\`\``;
    const plan = answerFile(answer, { maxChars: 0, codeLines: 3 })!;
    expect(plan.files.map((f) => [f.name, text(f)])).toEqual([
      ["code.py", `${py}\n`],
      ["code-2.sql", `${sql}\n`],
      ["code-3.txt", `${py}\n`],
    ]);
    expect(plan.message).toBe(
      `Run:\n\n*(python, 5 lines: attached as code.py.)*\n\nThen:\n\n\`\`\`bash\n${sh}\n\`\`\`\n\n*(SQL, 4 lines: attached as code-2.sql.)*\n\n*(Code, 5 lines: attached as code-3.txt.)*`,
    );
  });

  it("0 turns either rule off", () => {
    const block = `\`\`\`js\n${"x;\n".repeat(100)}\`\`\``;
    expect(answerFile(`${"a".repeat(20_000)}${block}`, { maxChars: 0, codeLines: 0 })).toBeNull();
  });
});
