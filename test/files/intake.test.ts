/**
 * Files on a message through the real loop, the real openai SDK and the validating endpoint: a
 * local file host stands in for the platform's file server (its token checked, every request
 * recorded), files read by one worker pool.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgent } from "../../src/core/agent/agent.js";
import type { AgentEvent, TurnInput } from "../../src/core/agent/types.js";
import { replay } from "../../src/core/conversations/replay.js";
import {
  createFileIntake,
  createFileReader,
  DEFAULT_FILE_LIMITS,
  type FileSource,
  type InboundFile,
} from "../../src/core/files/index.js";
import { createStore, type Store } from "../../src/store/create-store.js";
import { ann, testContext, testDeps, testTools } from "../support/agent-kit.js";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";
import { contentText } from "../support/transcript-checks.js";
import { type FileHost, PNG, pdfSaying, startFileHost } from "./support.js";

const TOKEN = "Bearer xoxb-test-token";
let ep: ScriptedOpenAI;
let host: FileHost;
let elsewhere: FileHost;
let store: Store;
let dir: string;
// One worker pool for the file: workers load their parsers once.
const reader = createFileReader({ workers: 1, timeoutMs: 60_000, memoryMb: 256 });
afterAll(() => reader.close());

beforeEach(async () => {
  host = await startFileHost(TOKEN);
  // Another host (by name): what a url_private pointing off-platform would reach.
  elsewhere = await startFileHost(undefined, "localhost");
  dir = await mkdtemp(join(tmpdir(), "neo-files-"));
  store = await createStore({ dataDir: dir, prefix: "t:" });
});
afterEach(async () => {
  await ep.close();
  await host.close();
  await elsewhere.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const source = (): FileSource => ({ hosts: [host.host], headers: async () => ({ authorization: TOKEN }) });

function serve(path: string, body: Buffer, type: string, over: Partial<InboundFile> = {}): InboundFile {
  host.files.set(path, { body, type });
  return {
    id: `F${path.replace(/\W/g, "")}`,
    name: path.slice(1),
    type,
    size: body.length,
    url: `${host.url}${path}`,
    ...over,
  };
}

function deps(vision: boolean, limits: Partial<typeof DEFAULT_FILE_LIMITS> = {}) {
  return {
    ...testDeps(ep, { tools: testTools({ look: () => ({ content: "looked", isError: false }) }) }),
    files: createFileIntake({ store, limits: { ...DEFAULT_FILE_LIMITS, vision, ...limits }, reader }),
  };
}

const withFiles = (text: string, files: InboundFile[]): TurnInput => ({ text, speaker: ann, files });
type Part = { type: string; text?: string; image_url?: { url: string } };

describe("files on a message", () => {
  it("a PNG reaches a vision model as an image part of the user message, for every request of its turn, and only its reference is logged", async () => {
    const png = serve("/shot.png", PNG, "image/png");
    // What the model is sent: the image decoded and re-encoded (here: the same single pixel, as PNG).
    let dataUrl = "";
    ep = await startScriptedOpenAI([
      {
        expect: (r) => {
          const parts = r.messages[0]!.content as Part[];
          expect(parts[0]).toMatchObject({ type: "text" });
          expect(parts[0]!.text).toContain(
            'what is this?\n[Image "shot.png" (image/png, 70 B, id Fshotpng), sha256 ',
          );
          expect(parts[1]!.type).toBe("image_url");
          dataUrl = parts[1]!.image_url!.url;
          expect(dataUrl).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
        },
        reply: { toolCalls: [{ id: "c1", name: "look", arguments: {} }] },
      },
      {
        expect: (r) => expect((r.messages[0]!.content as Part[])[1]!.image_url!.url).toBe(dataUrl),
        reply: { text: "A single pixel." },
      },
      {
        // The next turn: the image was released; the message is its text alone (which names it).
        expect: (r) => {
          expect(typeof r.messages[0]!.content).toBe("string");
          expect(r.messages[0]!.content).toContain('[Image "shot.png"');
        },
        reply: { text: "Still a pixel." },
      },
    ]);
    const agent = createAgent(deps(true));
    const ctx = testContext({ files: source() });
    expect((await agent.chat(withFiles("what is this?", [png]), ctx)).status).toBe("answered");
    expect(host.requests).toHaveLength(1);
    expect(host.requests[0]!.headers.authorization).toBe(TOKEN);
    const logged = JSON.stringify(ctx.events);
    expect(logged).not.toContain(PNG.toString("base64"));
    expect(logged).not.toContain(dataUrl.slice("data:image/png;base64,".length));
    // The store (its log on disk included) never held the image: only a reference, gone with the turn.
    const stored = await Promise.all((await readdir(dir)).map((f) => readFile(join(dir, f), "utf8")));
    expect(stored.join("")).not.toContain(PNG.toString("base64"));
    expect(stored.join("")).not.toContain(dataUrl.slice("data:image/png;base64,".length));
    expect(await store.keys("files:")).toEqual([]);
    const user = ctx.events[0] as Extract<AgentEvent, { type: "message" }>;
    expect(user.message).toMatchObject({
      role: "user",
      files: [
        {
          id: "Fshotpng",
          name: "shot.png",
          type: "image/png",
          size: PNG.length,
          kind: "image",
          attached: true,
        },
      ],
    });
    expect((await agent.chat({ text: "and now?", speaker: ann }, ctx)).status).toBe("answered");
  });

  it("a CSV reaches the model as text; a long text file is cut to its budget with a marker; a PDF is read", async () => {
    const csv = serve("/sales.csv", Buffer.from("region,amount\nnorth,12\nsouth,30\n"), "text/csv");
    const log = serve("/big.log", Buffer.from("line of the log file\n".repeat(5000)), "text/plain");
    const pdf = serve("/report.pdf", pdfSaying("Quarterly revenue grew 12 percent"), "application/pdf");
    ep = await startScriptedOpenAI([
      {
        expect: (r) => {
          const text = r.messages[0]!.content as string;
          expect(text).toContain('sum these\n[File "sales.csv" (text/csv, 32 B, id Fsalescsv), sha256 ');
          expect(text).toMatch(
            /its text between the <<<file-([0-9a-f]{16}) and >>>file-\1 lines:\]\n<<<file-\1\nregion,amount\nnorth,12\nsouth,30\n\n>>>file-\1\n/,
          );
          expect(text).toMatch(
            /\n>>>file-[0-9a-f]{16}\n\[… "big\.log": cut after about 1,000 tokens: [\d,]+ more characters not shown\]/,
          );
          expect(text.length).toBeLessThan(20_000);
          expect(text).toContain("Quarterly revenue grew 12 percent");
        },
        reply: { text: "42" },
      },
    ]);
    const agent = createAgent(deps(false, { textTokens: 1000 }));
    const ctx = testContext({ files: source() });
    expect((await agent.chat(withFiles("sum these", [csv, log, pdf]), ctx)).status).toBe("answered");
    expect(ctx.reporter.notices).toHaveLength(1);
    expect(ctx.reporter.notices[0]).toMatch(/^I read only part of "big\.log": cut after about 1,000 tokens/);
  });

  it("a 50 MB file is refused with a clear message, without a request; a file larger than it said is cut off at the limit", async () => {
    const huge: InboundFile = {
      id: "F50",
      name: "dump.csv",
      type: "text/csv",
      size: 50 * 1024 * 1024,
      url: `${host.url}/dump.csv`,
    };
    const liar = serve("/liar.txt", Buffer.alloc(4096, "a"), "text/plain", { size: 10 });
    ep = await startScriptedOpenAI([
      {
        expect: (r) => {
          const text = r.messages[0]!.content as string;
          expect(text).toContain(
            '[File "dump.csv" (text/csv, 50 MB, id F50): not read: it is 50 MB, more than the 1 KB limit]',
          );
          expect(text).toContain(
            '[File "liar.txt" (text/plain, 10 B, id Fliartxt): not read: it is 4 KB, more than the 1 KB limit]',
          );
        },
        reply: { text: "I could not read them." },
      },
    ]);
    const agent = createAgent(deps(false, { maxBytes: 1024 }));
    const ctx = testContext({ files: source() });
    await agent.chat(withFiles("", [huge, liar]), ctx);
    expect(ctx.reporter.notices).toEqual([
      'I could not read "dump.csv": it is 50 MB, more than the 1 KB limit.',
      'I could not read "liar.txt": it is 4 KB, more than the 1 KB limit.',
    ]);
    expect(host.requests.map((r) => r.path)).toEqual(["/liar.txt"]);
  });

  it("the token goes only to the platform's hosts: a URL elsewhere, or a redirect there, is refused and that host sees nothing", async () => {
    elsewhere.files.set("/steal.png", { body: PNG, type: "image/png" });
    const offsite: InboundFile = {
      id: "F1",
      name: "a.png",
      type: "image/png",
      size: PNG.length,
      url: `${elsewhere.url}/steal.png`,
    };
    host.files.set("/hop.png", {
      body: Buffer.alloc(0),
      type: "image/png",
      redirect: `${elsewhere.url}/steal.png`,
    });
    const hop: InboundFile = {
      id: "F2",
      name: "b.png",
      type: "image/png",
      size: PNG.length,
      url: `${host.url}/hop.png`,
    };
    const plain: InboundFile = {
      id: "F3",
      name: "c.png",
      type: "image/png",
      size: PNG.length,
      url: `http://files.example.com/c.png`,
    };
    ep = await startScriptedOpenAI([{ reply: { text: "ok" } }]);
    const agent = createAgent(deps(true));
    const ctx = testContext({ files: source() });
    await agent.chat(withFiles("look", [offsite, hop, plain]), ctx);
    expect(elsewhere.requests).toEqual([]);
    expect(ctx.reporter.notices).toEqual([
      `I could not read "a.png": its address is on localhost, not on the platform's file hosts.`,
      `I could not read "b.png": its address is on localhost, not on the platform's file hosts.`,
      `I could not read "c.png": its address uses http:, not https.`,
    ]);
    expect(typeof ep.requests[0]!.messages[0]!.content).toBe("string");
  });

  it("a text-only model gets the image's name, and the user is told once per conversation", async () => {
    const a = serve("/a.png", PNG, "image/png");
    const b = serve("/b.png", PNG, "image/png");
    ep = await startScriptedOpenAI([
      {
        expect: (r) =>
          expect(r.messages[0]!.content).toBe(
            'see\n[Image "a.png" (image/png, 70 B, id Fapng): not shown: the model I run on does not read images]',
          ),
        reply: { text: "I cannot see it." },
      },
      { reply: { text: "Nor this one." } },
    ]);
    const agent = createAgent(deps(false));
    const ctx = testContext({ files: source() });
    await agent.chat(withFiles("see", [a]), ctx);
    await agent.chat(withFiles("and", [b]), ctx);
    expect(ctx.reporter.notices).toHaveLength(1);
    expect(ctx.reporter.notices[0]).toContain("I can't see images");
    expect(host.requests).toEqual([]);
  });

  it("a turn resumed after a restart fetches and checks its image again (no image bytes were stored), and the request is valid", async () => {
    const png = serve("/shot.png", PNG, "image/png");
    ep = await startScriptedOpenAI([
      { reply: { toolCalls: [{ id: "c1", name: "look", arguments: {} }] } },
      {
        // After the restart: the replayed transcript (with a synthetic result) still carries the image.
        expect: (r) => {
          const parts = r.messages[0]!.content as Part[];
          expect(parts[1]!.type).toBe("image_url");
          expect(contentText(parts)).toContain('[Image "shot.png"');
        },
        reply: { text: "A pixel." },
      },
    ]);
    // The first process dies while the tool runs: its turn never ends.
    let died!: () => void;
    const dying = new Promise<void>((r) => {
      died = r;
    });
    const first = {
      ...deps(true),
      tools: testTools({
        look: async () => {
          died();
          return new Promise(() => {});
        },
      }),
    };
    const ctx1 = testContext({ files: source() });
    void createAgent(first).chat(withFiles("what is this?", [png]), ctx1);
    await dying;
    const log = JSON.parse(JSON.stringify(ctx1.events)) as AgentEvent[];
    ctx1.controller.abort();
    const second = createAgent(deps(true), replay(log));
    const ctx2 = testContext({ files: source() });
    const res = await second.chat({ text: "(Neo restarted; continue.)", speaker: ann }, ctx2);
    expect(res.status).toBe("answered");
    expect(host.requests).toHaveLength(2);
    expect(await store.keys("files:")).toEqual([]);
  });
});
