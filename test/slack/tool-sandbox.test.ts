/**
 * Per-user tool state (DESIGN.md, Memory scopes; issue 17 item 3), end to end on Slack: the real
 * Bolt app, the real loop and the real tool surface built from the shipped `agents/default.json`,
 * whose filesystem tool (the published server-filesystem) runs one process per user, confined to
 * that user's own folder. What Ann's turn writes, Bob's turn cannot read or even list: not by the
 * path Ann's turn used, and not by looking around in his own folder.
 *
 * Events are `message.im` payloads as Slack sends them (https://api.slack.com/events/message.im).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface } from "../../src/core/tools/surface.js";
import type { ScriptedRequest, ScriptedTurn } from "../support/scripted-openai.js";
import { ROOT, tempDir } from "../tools/helpers.js";
import { envelope, type Harness, startHarness, until, userTs } from "./support/harness.js";

const SECRET = "ANN-OFFER-LETTER-5521";

/** The last tool result of a request. */
const lastResult = (r: ScriptedRequest) =>
  String(r.messages.filter((m) => m.role === "tool").at(-1)?.content);
/** The folder server-filesystem allows ("Allowed directories:\n<dir>"). */
const allowedDir = (r: ScriptedRequest) => lastResult(r).split("\n").at(-1)!.trim();

describe("Slack: the filesystem tool keeps one folder per user", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("Ann's fs write is not readable from Bob's turn", async () => {
    const data = join(tempDir("sandbox"), "data");
    const manifest = await loadManifest(join(ROOT, "agents/default.json"));
    h = await startHarness({
      surface: () =>
        createToolSurface({
          manifest,
          env: { ...process.env, NEO_DATA_DIR: data },
          resultMaxChars: 20_000,
          callTimeoutMs: 20_000,
        }),
    });
    const hh = h;
    const dm = (user: string, channel: string, text: string) => {
      const ts = userTs();
      return envelope({ type: "message", channel_type: "im", channel, user, text, ts, event_ts: ts });
    };
    const answered = (channel: string, text: string) =>
      until(`"${text}" in ${channel}`, () => hh.fake.messages(channel).some((m) => m.text === text));

    // Ann's turn: find her folder, write the file there.
    let annFile = "";
    hh.ep.script(
      {
        label: "ann: where",
        reply: { toolCalls: [{ name: "fs__list_allowed_directories", arguments: {} }] },
      },
      {
        label: "ann: write",
        reply: (r) => {
          annFile = join(allowedDir(r), "offer.txt");
          return { toolCalls: [{ name: "fs__write_file", arguments: { path: annFile, content: SECRET } }] };
        },
      },
      {
        label: "ann: answers",
        expect: (r) => expect(lastResult(r)).toContain("Successfully wrote"),
        reply: { text: "Saved your offer letter." },
      },
    );
    await hh.slack.event(dm("UANN", "D0ANN", "save my offer letter in a file"));
    await answered("D0ANN", "Saved your offer letter.");
    expect(readFileSync(annFile, "utf8")).toBe(SECRET);

    // Bob's turn: read Ann's path, then look around his own folder, then search for it.
    const bobResults: string[] = [];
    const collect = (r: ScriptedRequest) => bobResults.push(lastResult(r));
    let bobDir = "";
    const bobTurns: ScriptedTurn[] = [
      {
        label: "bob: reads Ann's path",
        reply: { toolCalls: [{ name: "fs__read_text_file", arguments: { path: annFile } }] },
      },
      {
        label: "bob: where",
        expect: collect,
        reply: { toolCalls: [{ name: "fs__list_allowed_directories", arguments: {} }] },
      },
      {
        label: "bob: lists his folder",
        reply: (r) => {
          bobDir = allowedDir(r);
          return { toolCalls: [{ name: "fs__list_directory", arguments: { path: bobDir } }] };
        },
      },
      {
        label: "bob: searches",
        expect: collect,
        reply: () => ({
          toolCalls: [{ name: "fs__search_files", arguments: { path: bobDir, pattern: "offer" } }],
        }),
      },
      { label: "bob: answers", expect: collect, reply: { text: "I found nothing of that." } },
    ];
    hh.ep.script(...bobTurns);
    await hh.slack.event(dm("UBOB", "D0BOB", "read Ann's offer letter"));
    await answered("D0BOB", "I found nothing of that.");

    expect(bobResults).toHaveLength(3);
    // The read of Ann's path is refused by Bob's server: her folder is outside his.
    expect(bobResults[0]).toMatch(/denied|outside allowed/i);
    for (const result of bobResults) expect(result).not.toContain(SECRET);
    // Nor is the file anywhere Bob's own folder shows (the refusal above only echoes the path asked).
    for (const result of bobResults.slice(1)) expect(result).not.toContain("offer.txt");
    expect(bobDir).not.toBe("");
    expect(bobDir).not.toBe(join(annFile, ".."));
    // Both folders are under the data directory's per-user folders; Ann's file is still hers.
    expect(bobDir.startsWith(join(data, "users"))).toBe(true);
    expect(annFile.startsWith(join(data, "users"))).toBe(true);
    expect(existsSync(join(bobDir, "offer.txt"))).toBe(false);
  });
});
