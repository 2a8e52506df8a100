/**
 * Rung 2 per attempt and stall by results, through the real loop, the real openai SDK against the
 * validating endpoint, and the published filesystem MCP server: a parallel batch is one attempt,
 * the model sees every error of it; a poll whose result changes is progress, one whose result stays
 * the same stops at the seed's threshold.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { input, testContext, testDeps } from "../support/agent-kit.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { filesystemServer, tempDir } from "../tools/helpers.js";

const dir = tempDir("progress");
let fs: McpToolSurface;
let ep: ScriptedOpenAI;

beforeAll(async () => {
  fs = await createToolSurface({
    manifest: parseManifest({ servers: { fs: filesystemServer(dir) } }),
    resultMaxChars: 4000,
    callTimeoutMs: 20_000,
  });
  expect(fs.warnings()).toEqual([]);
});
afterAll(async () => {
  await fs?.close();
});
afterEach(async () => {
  await ep.close();
});

const read = (name: string) => ({ name: "fs__read_file", arguments: { path: join(dir, name) } });

/** The tool results at the end of a request (the batch the model is answering). */
function lastResults(r: ScriptedRequest): string[] {
  const out: string[] = [];
  for (let i = r.messages.length - 1; i >= 0 && r.messages[i]!.role === "tool"; i--) {
    out.unshift(String(r.messages[i]!.content));
  }
  return out;
}

describe("recovery ladder rung 2 counts attempts, not calls", () => {
  it("three failing reads in one batch: the model sees all three errors and answers in the next step", async () => {
    ep = await startScriptedOpenAI([
      {
        reply: {
          text: "Reading the three reports.",
          toolCalls: [read("q1.txt"), read("q2.txt"), read("q3.txt")],
        },
      },
      {
        expect: (r) => {
          const errors = lastResults(r);
          expect(errors).toHaveLength(3);
          for (const [i, e] of errors.entries()) expect(e).toMatch(new RegExp(`q${i + 1}\\.txt`));
          for (const e of errors) expect(e).toMatch(/ENOENT|no such file/i);
        },
        reply: { text: "None of q1.txt, q2.txt or q3.txt exists in that folder." },
      },
    ]);
    const agent = createAgent(testDeps(ep, { tools: fs, limits: { maxAdaptAttempts: 2 } }));
    const ctx = testContext();
    const res = await agent.chat(input("summarize the quarterly reports"), ctx);
    expect(res).toMatchObject({ status: "answered", steps: 2 });
    expect(ctx.reporter.says).toEqual(["None of q1.txt, q2.txt or q3.txt exists in that folder."]);
    // The interim text sent with the calls is shown as Status, before the calls' own lines.
    expect(ctx.reporter.statuses.slice(0, 2)).toEqual(["Reading the three reports.", "• fs__read_file"]);
  });

  it("stops after maxAdaptAttempts further failing attempts, and the partial says what happened", async () => {
    ep = await startScriptedOpenAI([
      { reply: { toolCalls: [read("a.txt"), read("b.txt"), read("c.txt")] } },
      {
        expect: (r) => expect(lastResults(r)).toHaveLength(3),
        reply: { toolCalls: [read("reports/a.txt")] },
      },
      { expect: (r) => expect(lastResults(r)).toHaveLength(1), reply: { toolCalls: [read("old/a.txt")] } },
    ]);
    const agent = createAgent(testDeps(ep, { tools: fs, limits: { maxAdaptAttempts: 2 } }));
    const res = await agent.chat(input("read report a"), testContext());
    expect(res).toMatchObject({ status: "partial", steps: 3 });
    expect(res.text).toMatch(
      /^• fs__read_file returned errors in 3 of my attempts \(5 errors in all\); I read the errors and tried again 2 times without success, so I stopped\./,
    );
    expect(res.text).toContain("• fs__read_file (5 failed)");
  });
});

describe("stall detection compares results", () => {
  it("a poll whose result changes runs until the job completes", async () => {
    const status = join(dir, "job-status.txt");
    writeFileSync(status, "queued");
    ep = await startScriptedOpenAI();
    let polls = 0;
    ep.fallback((r) => {
      const last = lastResults(r)[0];
      if (last?.includes("done")) return { text: "The export finished." };
      // The job moves on between polls.
      polls++;
      writeFileSync(status, polls >= 7 ? "done: 1,204 rows exported" : `running: ${polls * 10}%`);
      return { toolCalls: [read("job-status.txt")] };
    });
    const agent = createAgent(testDeps(ep, { tools: fs, limits: { noProgressStall: 3, stepBudget: 12 } }));
    const res = await agent.chat(input("wait for the export to finish"), testContext());
    expect(res).toMatchObject({ status: "answered", text: "The export finished.", steps: 8 });
    expect(polls).toBe(7);
  });

  it("the same poll with the same result stops at the threshold, without running the repeat", async () => {
    writeFileSync(join(dir, "stuck.txt"), "running: 40%");
    ep = await startScriptedOpenAI();
    ep.fallback(() => ({ toolCalls: [read("stuck.txt")] }));
    const agent = createAgent(testDeps(ep, { tools: fs, limits: { noProgressStall: 3, stepBudget: 12 } }));
    const res = await agent.chat(input("wait for the stuck job"), testContext());
    expect(res).toMatchObject({ status: "partial", steps: 4 });
    expect(res.text).toMatch(
      /^I was repeating the same call \(• fs__read_file, 4 times in a row\) and it returned the same result each time, so I stopped\./,
    );
    expect(res.text).toContain("• fs__read_file (3 ok)");
    const calls = agent.state().working.filter((m) => m.role === "assistant" && m.tool_calls);
    expect(calls).toHaveLength(3);
  });
});
