/**
 * Files out on Slack: an MCP tool (the real fixture server over stdio) returns an image or a binary
 * resource; the real loop uploads it into the thread through Bolt's client (`files.uploadV2`:
 * files.getUploadURLExternal, the bytes to the upload URL, files.completeUploadExternal) against the
 * fake, and tells the model it was uploaded. A refused upload is said in text instead. Answers past
 * NEO_ANSWER_FILE_CHARS, and large code blocks, go the same way as files, with a short message.
 */
import { afterEach, describe, expect, it } from "vitest";
import { renderAnswer } from "../../src/adapters/slack/answer-render.js";
import { UPLOAD_FAILED_NOTE } from "../../src/core/agent/answer-file.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface } from "../../src/core/tools/surface.js";
import { CHART_PNG_BASE64, REPORT_CSV } from "../fixtures/mcp/chart.js";
import { fixture } from "../tools/helpers.js";
import { envelope, type Harness, mention, startHarness, until, userTs } from "./support/harness.js";

const chartSurface = async () =>
  createToolSurface({
    manifest: parseManifest({ servers: { chart: fixture("chart") } }),
    resultMaxChars: 50_000,
    callTimeoutMs: 20_000,
  });

describe("Slack: files from tools are uploaded to the thread", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("an MCP tool's image and resource blob are uploaded in the thread; the model reads that they were", async () => {
    h = await startHarness({
      surface: chartSurface,
      turns: [
        {
          reply: {
            toolCalls: [
              { id: "c1", name: "chart__draw_chart", arguments: {} },
              { id: "c2", name: "chart__export_report", arguments: {} },
            ],
          },
        },
        {
          expect: (r) => {
            const results = r.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
            expect(results[0]).toContain(
              "Chart drawn.\n[image image/png, 70 bytes]\n[draw_chart-1.png: uploaded to the conversation; the user sees it]",
            );
            expect(results[1]).toContain("[revenue.csv: uploaded to the conversation; the user sees it]");
          },
          reply: { text: "Here is the chart and the report." },
        },
      ],
    });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "chart the revenue", { ts })));
    await h.fake.waitFor(
      () => h!.fake.messages("C1", ts).some((m) => m.text === "Here is the chart and the report."),
      "answer",
    );
    expect(h.fake.uploads.map((u) => [u.filename, u.channel, u.thread_ts, u.comment])).toEqual([
      ["draw_chart-1.png", "C1", ts, "From chart__draw_chart: draw_chart-1.png"],
      ["revenue.csv", "C1", ts, "From chart__export_report: revenue.csv"],
    ]);
    expect(h.fake.uploads[0]!.bytes.toString("base64")).toBe(CHART_PNG_BASE64);
    expect(h.fake.uploads[1]!.bytes.toString()).toBe(REPORT_CSV);
    // The file messages are in the thread, before the answer.
    const thread = h.fake.messages("C1", ts);
    expect(thread.filter((m) => m.files?.length).map((m) => m.files![0]!.name)).toEqual([
      "draw_chart-1.png",
      "revenue.csv",
    ]);
  });

  it("a refused upload is said in the thread instead, and the model is told", async () => {
    h = await startHarness({
      surface: chartSurface,
      turns: [
        { reply: { toolCalls: [{ id: "c1", name: "chart__draw_chart", arguments: {} }] } },
        {
          expect: (r) =>
            expect(String(r.messages.at(-1)!.content)).toContain(
              "[draw_chart-1.png: the upload failed; the user was told it could not be shown]",
            ),
          reply: { text: "I drew it but could not show it." },
        },
      ],
    });
    h.fake.failUploads(true);
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "chart it", { ts })));
    await h.fake.waitFor(
      () => h!.fake.messages("C1", ts).some((m) => m.text === "I drew it but could not show it."),
      "answer",
    );
    expect(h.fake.uploads).toEqual([]);
    expect(h.fake.messages("C1", ts).map((m) => m.text)).toContain(
      "I could not upload draw_chart-1.png from chart__draw_chart here (the upload failed).",
    );
  });
});

/** 9,000+ characters: past the default NEO_ANSWER_FILE_CHARS (8,000). */
const para = (i: number) =>
  `Paragraph ${i}: ${"the rollout plan in detail, step by step. ".repeat(20).trim()}`;
const LONG = Array.from({ length: 12 }, (_, i) => para(i + 1)).join("\n\n");
const CODE = Array.from({ length: 80 }, (_, i) => `print(${i})`).join("\n");

describe("Slack: long answers are sent as files", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("an answer past the limit is uploaded as answer.md in the thread, its beginning said beside it", async () => {
    h = await startHarness({ turns: [{ reply: { text: LONG } }] });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "write the plan", { ts })));
    const short = `${para(1).slice(0, para(1).slice(0, 400).lastIndexOf(" "))}…\n\n_(The full answer is attached as answer.md.)_`;
    await h.fake.waitFor(() => h!.fake.messages("C1", ts).some((m) => m.text === short), "short answer");
    expect(h.fake.uploads.map((u) => [u.filename, u.channel, u.thread_ts, u.comment])).toEqual([
      ["answer.md", "C1", ts, ""],
    ]);
    expect(h.fake.uploads[0]!.bytes.toString("utf8")).toBe(LONG);
    const thread = h.fake.messages("C1", ts).filter((m) => m.user !== "UANN");
    expect(thread.map((m) => [m.text, m.files?.map((f) => f.name) ?? []])).toEqual([
      ["", ["answer.md"]],
      [short, []],
    ]);
  });

  it("streamed: the stream stops growing at the limit and is replaced by the short message beside answer.md", async () => {
    h = await startHarness({ draftPace: { firstWriteMs: 0, intervalMs: 0 } });
    const { fake } = h;
    h.ep.script({
      reply: {
        text: LONG,
        stream: {
          deltas: 20,
          // The answer is on screen, streaming, before the model finishes.
          beforeDelta: async (i) => {
            if (i === 10)
              await fake.waitFor(() => fake.callsTo("chat.startStream").length === 1, "the stream");
          },
        },
      },
    });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "write the plan", { ts })));
    const short = `${para(1).slice(0, para(1).slice(0, 400).lastIndexOf(" "))}…\n\n_(The full answer is attached as answer.md.)_`;
    await until("the short message and the file", () => {
      const mine = h!.fake.messages("C1", ts).filter((m) => m.user !== "UANN");
      return mine.length === 2 && mine.some((m) => m.text === short) && !mine.some((m) => m.streaming);
    });
    expect(h.fake.uploads.map((u) => u.filename)).toEqual(["answer.md"]);
    expect(h.fake.uploads[0]!.bytes.toString("utf8")).toBe(LONG);
    // Nothing past the limit was ever streamed: the end of the answer only in the file.
    const streamed = [...fake.callsTo("chat.startStream"), ...fake.callsTo("chat.appendStream")]
      .map((c) => JSON.stringify(c.args))
      .join("");
    expect(streamed).toContain("Paragraph 1:");
    expect(streamed).not.toContain("Paragraph 12:");
    expect(fake.violations()).toEqual([]);
  });

  it("a large code block goes as code.py; the message names it in its place", async () => {
    h = await startHarness({
      turns: [{ reply: { text: `Here is the script:\n\n\`\`\`python\n${CODE}\n\`\`\`\n\nRun it.` } }],
    });
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "write a script", { ts })));
    const said = "Here is the script:\n\n_(python, 80 lines: attached as code.py.)_\n\nRun it.";
    await h.fake.waitFor(() => h!.fake.messages("C1", ts).some((m) => m.text === said), "message");
    expect(h.fake.uploads.map((u) => [u.filename, u.bytes.toString("utf8")])).toEqual([
      ["code.py", `${CODE}\n`],
    ]);
  });

  it("a refused upload says the whole answer as split text, with a note", async () => {
    h = await startHarness({ turns: [{ reply: { text: LONG } }] });
    h.fake.failUploads(true);
    const ts = userTs();
    await h.slack.event(envelope(mention("C1", "UANN", "write the plan", { ts })));
    const parts = renderAnswer(`${LONG}\n\n${UPLOAD_FAILED_NOTE}`).map((p) => p.text);
    await h.fake.waitFor(
      () => h!.fake.messages("C1", ts).some((m) => m.text === parts.at(-1)),
      "the last part of the answer",
    );
    expect(h.fake.uploads).toEqual([]);
    expect(
      h.fake
        .messages("C1", ts)
        .filter((m) => m.user !== "UANN")
        .map((m) => m.text),
    ).toEqual(parts);
  });
});
