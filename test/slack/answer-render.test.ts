/**
 * Answers with tables go out as Slack `markdown` blocks (standard Markdown, tables rendered; at
 * most 12,000 characters of markdown blocks per message, Block Kit reference "Markdown block"),
 * every other answer as mrkdwn; either way nothing the model writes can ping anyone.
 */
import { afterEach, describe, expect, it } from "vitest";
import { hasTable, renderAnswer, safeMarkdown } from "../../src/adapters/slack/answer-render.js";
import { envelope, type Harness, mention, startHarness } from "./support/harness.js";

const table = "| asset | balance |\n| --- | ---: |\n| USDC | 12.5 |\n| ETH | 0.25 |";

describe("Slack answer rendering", () => {
  it("finds GFM tables, not pipes in prose or in code", () => {
    expect(hasTable(`Balances:\n\n${table}\n`)).toBe(true);
    expect(hasTable("a | b and c | d")).toBe(false);
    expect(hasTable(`\`\`\`\n${table}\n\`\`\``)).toBe(false);
  });

  it("keeps mrkdwn for answers without a table", () => {
    expect(renderAnswer("**bold** and [a link](https://example.com)")).toEqual([
      { text: "*bold* and <https://example.com|a link>" },
    ]);
  });

  it("sends a table as a markdown block, with a mrkdwn text for notifications", () => {
    const parts = renderAnswer(`**Balances**\n\n${table}`);
    expect(parts).toHaveLength(1);
    expect(parts[0]!.blocks).toEqual([{ type: "markdown", text: `**Balances**\n\n${table}` }]);
    expect(parts[0]!.text.startsWith("*Balances*")).toBe(true);
  });

  it("escapes what could ping outside code, and leaves code as written", () => {
    expect(safeMarkdown("Hey <!channel> & <@U1>, @here `<!here>`")).toBe(
      "Hey \\<\u200b!channel\\> \\& \\<\u200b@U1\\>, @\u200bhere `<!here>`",
    );
    expect(safeMarkdown("```\n<!channel>\n```")).toBe("```\n<!channel>\n```");
  });

  it("splits a long table answer so each message stays under the markdown-block limit", () => {
    const rows = Array.from({ length: 800 }, (_, i) => `| row ${i} | ${"<&>".repeat(3)} |`).join("\n");
    const parts = renderAnswer(`| a | b |\n| --- | --- |\n${rows}`);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(p.blocks![0]!.text.length).toBeLessThanOrEqual(12_000);
    const all = parts.map((p) => p.blocks![0]!.text).join("\n");
    for (const i of [0, 399, 799]) expect(all).toContain(`| row ${i} |`);
  });
});

describe("Slack answers with tables, through Bolt and the fake Web API", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("posts the table answer as a markdown block that pings no one", async () => {
    h = await startHarness({ turns: [{ reply: { text: `Here, <!channel>:\n\n${table}` } }] });
    await h.slack.event(envelope(mention("C1", "UANN", "balances?")));
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
    const call = h.fake.callsTo("chat.postMessage")[0]!;
    const blocks = call.args.blocks as Array<{ type: string; text: string }>;
    expect(blocks.map((b) => b.type)).toEqual(["markdown"]);
    expect(blocks[0]!.text).toContain("| USDC | 12.5 |");
    expect(JSON.stringify(call.args)).not.toMatch(/<!|<@/);
  });
});
