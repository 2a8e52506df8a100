/**
 * Acceptance (issue 19): restart in the middle of a turn with an image. A real Neo process (the
 * conversation worker: Conversations, the real loop and openai SDK against the validating endpoint,
 * the gate MCP server, real Redis) reads a PNG from the file host, shows it to the model, and is
 * SIGKILLed while the tool call runs. The next process resumes the turn: its request is valid and
 * still carries the same image, fetched and checked again (issue 35: Redis keeps only a reference
 * to the turn's image, its URL and hash, never its bytes), and the reference is deleted when the
 * resumed turn ends.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { INTERRUPTED_TOOL_RESULT } from "../../src/core/conversations/replay.js";
import type { InboundMessage } from "../../src/core/conversations/types.js";
import { createStore } from "../../src/store/create-store.js";
import { type FileHost, PNG, startFileHost } from "../files/support.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { readSaid, startWorker, until, type WorkerProcess } from "./worker-process.js";

const redis = await probeRedis();
const AUTH = "Bearer xoxb-restart-token";
const CONV = "console:local:main:img";
/** What the model was sent the first time (the image decoded and re-encoded by the reader). */
let sent = "";

type Part = { type: string; text?: string; image_url?: { url: string } };
/** The image parts of the request's user messages. */
const imagesOf = (req: ScriptedRequest): string[] =>
  req.messages
    .filter((m) => m.role === "user" && Array.isArray(m.content))
    .flatMap((m) => (m.content as Part[]).filter((p) => p.type === "image_url").map((p) => p.image_url!.url));

describe.skipIf(!redis.ok)("restart in the middle of a turn with an image (real Redis)", () => {
  let ep: ScriptedOpenAI | null = null;
  let host: FileHost | null = null;
  const workers: WorkerProcess[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    await ep?.close();
    await host?.close();
  });

  it("the resumed request is valid and shows the same image, fetched again; its reference goes when the turn ends", {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "neo-restart-img-"));
    const out = join(dir, "out.jsonl");
    host = await startFileHost(AUTH);
    host.files.set("/shot.png", { body: PNG, type: "image/png" });
    ep = await startScriptedOpenAI([
      {
        label: "sees the image, opens the gate tool",
        expect: (req) => {
          [sent = ""] = imagesOf(req);
          expect(sent).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
        },
        reply: { toolCalls: [{ id: "call_gate", name: "gate__wait_for_gate", arguments: { name: "g1" } }] },
      },
      {
        label: "after the restart: the same image, the synthetic result",
        expect: (req) => {
          expect(imagesOf(req)).toEqual([sent]);
          expect(req.messages.find((m) => m.role === "tool")?.content).toBe(INTERRUPTED_TOOL_RESULT);
        },
        reply: { text: "A single pixel." },
      },
    ]);
    const prefix = uniquePrefix("restart-image");
    const env = {
      WORKER_OUT: out,
      WORKER_INSTANCE_ID: "solo",
      WORKER_REDIS_URL: redis.url,
      WORKER_PREFIX: prefix,
      WORKER_ENDPOINT_URL: ep.url,
      WORKER_GATE_DIR: dir,
      WORKER_FILE_HOST: host.host,
      WORKER_FILE_AUTH: AUTH,
      WORKER_VISION: "true",
    };
    const message: InboundMessage = {
      id: "m1",
      conversation: CONV,
      speaker: { userKey: "console:local:ann", displayName: "Ann" },
      text: "what is this?",
      shared: false,
      place: { kind: "dm", workspace: "local" },
      receivedAt: Date.now(),
      files: [
        { id: "F1", name: "shot.png", type: "image/png", size: PNG.length, url: `${host.url}/shot.png` },
      ],
    };
    const store = await createStore({ redisUrl: redis.url, dataDir: dir, prefix });
    try {
      const first = await startWorker(env);
      workers.push(first);
      expect(await first.submit(message)).toEqual({ accepted: true });
      await until("the tool call is running", () => existsSync(join(dir, "g1.started")));
      expect(host.requests.map((r) => r.path)).toEqual(["/shot.png"]);
      // A reference for the turn in Redis (where to fetch the image again, its hash), not its bytes.
      const claims = await store.keys("files:");
      expect(claims).toHaveLength(1);
      const claim = JSON.stringify(await store.get(claims[0]!));
      expect(claim).not.toContain(PNG.toString("base64"));
      expect(claim.length).toBeLessThan(300);
      first.child.kill("SIGKILL");
      await first.exited;

      const second = await startWorker(env);
      workers.push(second);
      await until("the resumed turn answered", () =>
        readSaid(out).some((s) => s.kind === "say" && s.text === "A single pixel."),
      );
      await until("the image's reference deleted", async () => (await store.keys("files:")).length === 0);
      second.child.kill("SIGTERM");
      expect(await second.exited).toBe(0);
      // Downloaded before the crash and again by the resumed turn, each time with the token.
      expect(host.requests.map((r) => [r.path, r.headers.authorization])).toEqual([
        ["/shot.png", AUTH],
        ["/shot.png", AUTH],
      ]);
      expect(ep.requests).toHaveLength(2);
    } finally {
      for (const k of await store.keys("")) await store.delete(k);
      await store.close();
    }
  });
});
