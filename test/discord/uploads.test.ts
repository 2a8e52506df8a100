/**
 * Files out on Discord: an MCP tool (the real chart fixture over stdio) returns an image and a
 * binary resource; the real loop uploads them through the real discord.js client as message
 * attachments in the thread (multipart: `payload_json` + `files[n]`,
 * discord.com/developers/docs/reference#uploading-files), the fake records their bytes, and the
 * model reads that the user sees them. A refused upload (413, code 40005) is said in text instead.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CHART_PNG_BASE64, REPORT_CSV } from "../fixtures/mcp/chart.js";
import { fixture } from "../tools/helpers.js";
import { botMessages, type Rig, startRig, untilShown } from "./support/harness.js";

describe("Discord: files from tools are uploaded to the thread", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("an MCP tool's image and resource blob are attachments in the thread, with their bytes", async () => {
    rig = await startRig({ servers: { chart: fixture("chart") } });
    const { fake, ep } = rig;
    ep.script(
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
          expect(results[0]).toContain("[draw_chart-1.png: uploaded to the conversation; the user sees it]");
          expect(results[1]).toContain("[revenue.csv: uploaded to the conversation; the user sees it]");
        },
        reply: { text: "Here is the chart and the report." },
      },
    );
    const m = await fake.say(fake.alice, fake.channel, "chart the revenue", { mentionBot: true });
    await untilShown(fake, m.id, [
      "From chart__draw_chart: draw_chart-1.png",
      "From chart__export_report: revenue.csv",
      "Here is the chart and the report.",
    ]);
    expect(fake.uploads.map((u) => [u.channelId, u.filename, u.contentType])).toEqual([
      [m.id, "draw_chart-1.png", "image/png"],
      [m.id, "revenue.csv", "text/csv"],
    ]);
    expect(fake.uploads[0]!.bytes.toString("base64")).toBe(CHART_PNG_BASE64);
    expect(fake.uploads[1]!.bytes.toString()).toBe(REPORT_CSV);
    // Each file is a message in the thread with a short line naming the tool, before the answer.
    const thread = botMessages(fake, m.id);
    expect(
      thread.map((x) => [x.content, (x.attachments as Array<{ filename: string }>).map((a) => a.filename)]),
    ).toEqual([
      ["From chart__draw_chart: draw_chart-1.png", ["draw_chart-1.png"]],
      ["From chart__export_report: revenue.csv", ["revenue.csv"]],
      ["Here is the chart and the report.", []],
    ]);
  });

  it("a refused upload is said in the thread instead, and the model is told", async () => {
    rig = await startRig({ servers: { chart: fixture("chart") } });
    const { fake, ep } = rig;
    fake.refuseUploads(true);
    ep.script(
      { reply: { toolCalls: [{ id: "c1", name: "chart__draw_chart", arguments: {} }] } },
      {
        expect: (r) =>
          expect(String(r.messages.at(-1)!.content)).toContain(
            "[draw_chart-1.png: the upload failed; the user was told it could not be shown]",
          ),
        reply: { text: "I drew it but could not show it." },
      },
    );
    const m = await fake.say(fake.alice, fake.channel, "chart it", { mentionBot: true });
    await untilShown(fake, m.id, [
      "I could not upload draw_chart-1.png from chart__draw_chart here (the upload failed).",
      "I drew it but could not show it.",
    ]);
    expect(fake.uploads).toEqual([]);
    expect(fake.calls.some((c) => c.status === 413 && c.path === `/channels/${m.id}/messages`)).toBe(true);
  });
});
